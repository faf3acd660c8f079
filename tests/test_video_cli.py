"""`datasolver video` through CliRunner: the JSON shape, the outputs' place, the input untouched."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from datasolver.cli import cli
from tests.helpers.datafiles import write_task


def _snapshot(folder):
    return sorted((p.relative_to(folder).as_posix(), p.stat().st_size) for p in folder.rglob("*"))


def test_json_has_exactly_the_documented_shape(screencast, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DATASOLVER_CACHE_DIR", str(tmp_path / "cache"))
    task = write_task(tmp_path / "input", "task_v")
    (task / "context" / "video").mkdir()
    shutil.copyfile(screencast.path, task / "context" / "video" / "briefing.mp4")
    before = _snapshot(task)
    out = tmp_path / "scratch" / "derived" / "video"
    result = CliRunner().invoke(cli, ["video", str(task), "--json", "--no-asr", "--no-ocr", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert list(data) == ["videos"]
    video = data["videos"][0]
    assert list(video) == ["source", "duration_s", "frames", "speech", "notes"]
    assert video["source"] == "context/video/briefing.mp4"
    assert list(video["frames"][0]) == ["time_s", "image", "text", "layout"]
    assert video["speech"] == [] and any("--no-asr" in n for n in video["notes"])
    assert all((out / "briefing" / f["image"].rsplit("/", 1)[-1]).is_file() for f in video["frames"])
    assert (out / "timeline.json").is_file()
    assert _snapshot(task) == before, "the input task folder was written"


def test_out_inside_the_input_is_refused(screencast, tmp_path) -> None:
    task = write_task(tmp_path / "input", "task_v")
    shutil.copyfile(screencast.path, task / "context" / "briefing.mp4")
    result = CliRunner().invoke(cli, ["video", str(task), "--out", str(task / "context" / "frames")])
    assert result.exit_code == 1
    assert "lies inside the input" in result.output
    assert not (task / "context" / "frames").exists()


def test_a_prepared_scratch_gets_derived_video(screencast, tmp_path, monkeypatch) -> None:
    from datasolver.solver.prepare import prepare_task

    monkeypatch.setenv("DATASOLVER_CACHE_DIR", str(tmp_path / "cache"))
    task = write_task(tmp_path / "input", "task_v")
    shutil.copyfile(screencast.path, task / "context" / "briefing.mp4")
    scratch = prepare_task(task, tmp_path / "scratch")
    result = CliRunner().invoke(cli, ["video", str(scratch), "--no-asr", "--no-ocr"])
    assert result.exit_code == 0, result.output
    assert "[00:00.6] FRAME 1 (derived/video/briefing/frame_01_00m00.6s.png)" in result.output
    assert (scratch / "derived" / "video" / "briefing" / "frame_01_00m00.6s.png").is_file()


def test_a_folder_without_media_says_so(tmp_path) -> None:
    task = write_task(tmp_path / "input", "task_v", files={"a.csv": "x\n1\n"})
    result = CliRunner().invoke(cli, ["video", str(task), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0
    assert result.output.startswith("no video or audio files in")


def test_two_passes_over_folders_of_one_name_get_their_own_copies(tmp_path, monkeypatch) -> None:
    """Two terminals (or two test workers) reading task folders of one name: each mirrors into a
    folder of its own. A fixed `$TMPDIR/datasolver-scratch/<name>` was shared, and one pass read
    the other's half-made copy ("No such file or directory": no frames, CI run of stop 37)."""
    import tempfile

    from datasolver.video.outputs import place

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    first = place(write_task(tmp_path / "a", "task_v"))
    second = place(write_task(tmp_path / "b", "task_v"))
    assert first.media != second.media and first.out_dir != second.out_dir
    assert first.media.name == second.media.name == "task_v"
    assert (first.media / "context").is_dir() and (second.media / "context").is_dir()
    assert oct((first.media.parent).stat().st_mode & 0o777) == "0o700"


def test_with_out_the_checked_copy_is_removed_when_done(screencast, tmp_path, monkeypatch) -> None:
    """With --out the frames go there; the invocation's checked copy of the raw folder (links to
    the input's files, nothing asked for) is removed, not left behind in $TMPDIR at every run."""
    import tempfile

    monkeypatch.setenv("DATASOLVER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    task = write_task(tmp_path / "input", "task_v")
    shutil.copyfile(screencast.path, task / "context" / "briefing.mp4")
    out = tmp_path / "frames"
    result = CliRunner().invoke(cli, ["video", str(task), "--no-asr", "--no-ocr", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "timeline.json").is_file() and any((out / "briefing").glob("frame_*.png"))
    assert list((tmp_path / "tmp").iterdir()) == []
    kept = CliRunner().invoke(cli, ["video", str(task), "--no-asr", "--no-ocr"])  # no --out: the copy holds the frames
    (copy,) = (tmp_path / "tmp").glob("datasolver-video-*/task_v")
    assert f"frames and timeline.json in {copy / 'derived' / 'video'}" in kept.output

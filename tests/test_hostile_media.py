"""Media opened as media (issue 33, item 2): FFmpeg picks its demuxer from a file's content, so a
`.mp4` that is a concat script decoded a video outside the task through a folder link the input
check refused, or blocked forever on a FIFO. Each attack is a tiny file in a task folder run
through `datasolver video`; HLS/DASH playlists named .mp4 were already held and stay so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import wave
from pathlib import Path

import pytest

from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data.input_files import FOLLOW_OUTSIDE_ENV
from tests.helpers.datafiles import write_task

av = pytest.importorskip("av", reason="the video extra is not installed (pip install -e '.[video]')")


def make_video(path: Path, frames: int = 10) -> Path:
    """A tiny H.264 video (64×48, 5 fps) whose frames get brighter: something to decode."""
    import numpy as np

    with av.open(str(path), "w", format="matroska" if path.suffix == ".mkv" else None) as container:
        stream = container.add_stream("libx264", rate=5)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(frames):
            image = np.full((48, 64, 3), i * 25, np.uint8)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        container.mux(stream.encode())
    return path


@pytest.fixture
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A task folder whose context/video/out links to a folder outside holding a real video."""
    # An earlier `--follow-outside-links` in this worker may have left the opt-in set.
    monkeypatch.delenv(FOLLOW_OUTSIDE_ENV, raising=False)
    monkeypatch.setenv("DATASOLVER_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))  # a subprocess's temporary scratch
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # this process's
    outside = tmp_path / "outside"
    outside.mkdir()
    make_video(outside / "secret.mp4")
    task = write_task(tmp_path / "input", "task_v")
    (task / "context" / "video").mkdir()
    (task / "context" / "video" / "out").symlink_to(outside, target_is_directory=True)
    return task


def video_json(*args: str) -> dict:
    result = CliRunner().invoke(cli, ["video", *args, "--json", "--no-asr", "--no-ocr"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_concat_script_named_mp4_decodes_nothing_outside_the_task(task: Path) -> None:
    evil = task / "context" / "video" / "evil.mp4"
    evil.write_text("ffconcat version 1.0\nfile 'out/secret.mp4'\n", encoding="utf-8")
    (video,) = video_json(str(task))["videos"]
    assert video["source"] == "context/video/evil.mp4"
    assert video["frames"] == [] and video["duration_s"] == 0.0, video
    assert any("only the mov container its .mp4 name promises is read" in n for n in video["notes"]), video["notes"]
    # The file named on its own, and the library on the raw folder (no checked copy): the same.
    (alone,) = video_json(str(evil))["videos"]
    assert alone["frames"] == [] and alone["duration_s"] == 0.0, alone

    from datasolver.video import analyze_path

    report = analyze_path(task, task.parent.parent / "frames", cache_dir=None)
    assert [v.frames for v in report.videos] == [[]]


def test_video_on_a_raw_task_reads_a_checked_copy(task: Path) -> None:
    make_video(task / "context" / "video" / "good.mp4")
    make_video(task / "context" / "video" / "good.mkv")
    data = video_json(str(task))
    assert [v["source"] for v in data["videos"]] == ["context/video/good.mkv", "context/video/good.mp4"]
    assert all(v["frames"] and v["duration_s"] > 0 for v in data["videos"]), data
    (copy,) = Path(tempfile.gettempdir()).glob("datasolver-video-*/task_v")  # this invocation's own
    assert sorted(p.name for p in (copy / "context" / "video").iterdir()) == ["good.mkv", "good.mp4"]
    record = json.loads((copy / "prepared.json").read_text(encoding="utf-8"))
    assert [path for path, _ in record["refused"]] == ["video/out"]  # the folder link is not in the copy


def test_a_concat_script_to_a_fifo_does_not_block(task: Path) -> None:
    os.mkfifo(task / "context" / "video" / "pipe.mp4")
    (task / "context" / "video" / "evil.mp4").write_text("ffconcat version 1.0\nfile 'pipe.mp4'\n", encoding="utf-8")
    try:
        done = subprocess.run([sys.executable, "-m", "datasolver", "video", str(task), "--json", "--no-asr", "--no-ocr"],
                              capture_output=True, text=True, timeout=60, env=os.environ)
    except subprocess.TimeoutExpired:
        pytest.fail("datasolver video blocked on the FIFO a concat script named")
    assert done.returncode == 0, done.stderr
    (video,) = json.loads(done.stdout)["videos"]  # the FIFO itself is refused by the input check
    assert video["source"] == "context/video/evil.mp4" and video["frames"] == []


@pytest.mark.parametrize("playlist", [
    "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:2,\nout/secret.mp4\n#EXT-X-ENDLIST\n",
    ('<?xml version="1.0"?><MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" '
     'mediaPresentationDuration="PT2S"><Period><AdaptationSet><Representation id="1" bandwidth="1000">'
     "<BaseURL>out/secret.mp4</BaseURL></Representation></AdaptationSet></Period></MPD>\n"),
], ids=["hls", "dash"])
def test_a_playlist_named_mp4_stays_unread(task: Path, playlist: str) -> None:
    (task / "context" / "video" / "list.mp4").write_text(playlist, encoding="utf-8")
    (video,) = video_json(str(task))["videos"]
    assert video["frames"] == [] and video["duration_s"] == 0.0, video


def test_speech_audio_is_decoded_from_the_file_alone(tmp_path: Path) -> None:
    from datasolver.video.speech import decode_audio

    good = tmp_path / "tone.wav"
    with wave.open(str(good), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x10" * 8000)  # one second
    samples = decode_audio(good)
    assert abs(len(samples) - 16000) < 400 and samples.dtype.name == "float32"
    make_video(tmp_path / "secret.mp4")
    evil = tmp_path / "evil.wav"
    evil.write_text("ffconcat version 1.0\nfile 'secret.mp4'\n", encoding="utf-8")
    with pytest.raises(av.InvalidDataError):
        decode_audio(evil)

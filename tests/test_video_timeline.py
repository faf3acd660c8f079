"""The video pass with OCR and ASR on a generated screencast, and its edge cases."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from datasolver.video import VideoOptions, analyze_path
from datasolver.video.analyze import analyze_media
from datasolver.video.timeline import MediaTimeline, render_timeline
from tests.helpers.videomedia import SLIDES_SPEC, make, require_media_tools, state_of


def _video(report) -> MediaTimeline:
    assert len(report.videos) == 1
    return report.videos[0]


def test_one_keyframe_per_state_in_time_order(screencast, screencast_report) -> None:
    video = _video(screencast_report)
    states = [state_of(screencast, f.time_s) for f in video.frames]
    assert states == list(range(len(SLIDES_SPEC))), [(f.time_s, f.text) for f in video.frames]


def test_ocr_text_holds_each_states_labels_and_numbers(screencast_report) -> None:
    frames = _video(screencast_report).frames
    for frame, spec in zip(frames, SLIDES_SPEC):
        compact = frame.text.replace(" ", "")
        for cell in [spec["title"], *(c for row in spec["rows"] for c in row)]:
            assert cell.replace(" ", "") in compact, (cell, frame.text)
    assert "5000" in frames[1].text and "6000" not in frames[1].text
    assert "6000" in frames[2].text and "5000" not in frames[2].text
    assert "Apply" not in " ".join(f.text for f in frames), "the passing tooltip became a keyframe"


def test_layout_rows_join_cells_with_bars(screencast_report) -> None:
    panel = _video(screencast_report).frames[2].layout.splitlines()
    assert panel[-1].replace(" ", "") == "amount|>=|6000"
    assert len(panel) == 3


def test_frames_are_pngs_under_derived_video(screencast_report, screencast) -> None:
    for frame in _video(screencast_report).frames:
        assert frame.image.startswith("derived/video/briefing/frame_")
        assert frame.image.endswith(".png")


def test_transcript_holds_the_spoken_numbers_at_their_times(screencast, screencast_report) -> None:
    video = _video(screencast_report)
    if not video.speech:
        pytest.skip(f"no ASR model installed: {video.notes}")
    said = " ".join(s.text for s in video.speech).replace(",", "")
    assert "12345" in said and "6000" in said
    final = next(s for s in video.speech if "6000" in s.text.replace(",", ""))
    assert final.start_s >= screencast.starts[3] - 0.5


def test_timeline_text_interleaves_frames_and_speech_by_time(screencast_report) -> None:
    text = render_timeline(_video(screencast_report))
    assert text.index("FRAME 3") < text.index("FRAME 4")
    if _video(screencast_report).speech:
        assert text.index("FRAME 3") < text.index("SPEECH: The final threshold")


def test_a_second_pass_comes_from_the_cache(screencast, tmp_path, monkeypatch) -> None:
    cache = tmp_path / "cache"
    first = analyze_media(screencast.path, tmp_path / "a" / "briefing", source="briefing.mp4",
                          options=VideoOptions(asr=False, ocr=False), cache_dir=cache)
    import av  # the video extra's decoder: every media file is opened through av.open

    def no_decoding(*args, **kwargs):
        raise AssertionError("decoded again despite the cache")

    monkeypatch.setattr(av, "open", no_decoding)
    second = analyze_media(screencast.path, tmp_path / "b" / "briefing", source="briefing.mp4",
                           options=VideoOptions(asr=False, ocr=False), cache_dir=cache)
    assert [(f.time_s, f.text) for f in second.frames] == [(f.time_s, f.text) for f in first.frames]
    assert all((tmp_path / "b" / "briefing" / Path(f.image).name).is_file() for f in second.frames)


def test_bad_files_become_notes(tmp_path) -> None:
    require_media_tools()
    (tmp_path / "empty.mp4").write_bytes(b"")
    (tmp_path / "corrupt.mkv").write_bytes(b"\x1a\x45\xdf\xa3garbage" * 50)
    empty = analyze_media(tmp_path / "empty.mp4", tmp_path / "o1", source="empty.mp4")
    corrupt = analyze_media(tmp_path / "corrupt.mkv", tmp_path / "o2", source="corrupt.mkv")
    assert empty.frames == [] and "empty file" in empty.notes[0]
    assert corrupt.frames == [] and corrupt.notes


def test_silent_video_has_frames_and_an_audio_note(tmp_path) -> None:
    require_media_tools()
    spec = [dict(title="无声 Silent", rows=(("a", "1"),), seconds=1.0)]
    cast = make(tmp_path / "silent.mp4", spec, audio=False)
    video = analyze_media(cast.path, tmp_path / "out", source="silent.mp4", options=VideoOptions(ocr=False))
    assert len(video.frames) == 1
    assert any("no audio track" in n for n in video.notes)


def test_audio_only_file_gives_speech_only(tmp_path) -> None:
    require_media_tools(speech=True)
    wav = tmp_path / "memo.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), "The threshold is 6000."], check=True)
    video = analyze_path(wav, tmp_path / "out").videos[0]
    assert video.frames == []
    assert any("audio only" in n for n in video.notes)
    if video.speech:
        assert "6000" in video.speech[0].text.replace(",", "")


def test_json_round_trip(screencast_report) -> None:
    from datasolver.video import VideoReport

    data = json.loads(json.dumps(screencast_report.to_json()))
    assert VideoReport.from_json(data).to_json() == screencast_report.to_json()


def test_a_spent_time_budget_is_a_note_and_is_not_cached(screencast, tmp_path) -> None:
    import time

    cache = tmp_path / "cache"
    video = analyze_media(screencast.path, tmp_path / "out", source="briefing.mp4",
                          options=VideoOptions(asr=False), cache_dir=cache, deadline=time.monotonic())
    assert any(n.startswith("time budget spent") for n in video.notes), video.notes
    assert not cache.exists() or not any(cache.iterdir())

"""Keyframes of generated screencasts: one per visual state, including a single changed digit."""

from __future__ import annotations

import pytest

from datasolver.video.keyframes import DetectorSettings
from datasolver.video.keyframes import packet_events, scan_video
from tests.helpers.videomedia import SLIDES_SPEC, state_of


def test_every_state_has_a_candidate_after_its_change_settles(screencast) -> None:
    scan = scan_video(screencast.path)
    states = [state_of(screencast, c.time_s) for c in scan.candidates]
    assert sorted(set(states)) == list(range(len(SLIDES_SPEC)))
    for c in scan.candidates:
        start = screencast.starts[state_of(screencast, c.time_s)]
        assert c.time_s >= start + DetectorSettings().settle_s - 0.01, "grabbed before the change settled"
    assert scan.duration_s == pytest.approx(sum(screencast.seconds), abs=0.2)


def test_the_single_changed_digit_is_a_separate_candidate(screencast) -> None:
    scan = scan_video(screencast.path)
    by_state = {state_of(screencast, c.time_s): c for c in scan.candidates}
    # 5000 -> 6000 changes a handful of thumbnail pixels: far below a slide change, above 'still'.
    assert 0 < by_state[2].change < 0.01
    assert by_state[1].change > 0.05


def test_packet_events_ignore_periodic_keyframes_and_find_scene_cuts_and_bursts() -> None:
    packets = [(t / 10, 1000, t % 100 == 0) for t in range(0, 400)]  # a keyframe every 10 s
    packets = [p for p in packets if p[0] != 13.0] + [(13.0, 9000, True)]  # a scene-cut keyframe at 13 s
    packets = [p for p in packets if p[0] != 25.0] + [(25.0, 5000, False)]  # a burst at 25 s
    events = packet_events(packets, DetectorSettings())
    assert events == [(13.0, "keyframe"), (25.0, "burst")]


def test_a_file_without_video_is_refused(tmp_path) -> None:
    from datasolver.video.errors import MediaUnreadable

    bad = tmp_path / "noise.mp4"
    bad.write_bytes(b"\x00\x01not a video" * 100)
    with pytest.raises(MediaUnreadable):
        scan_video(bad)

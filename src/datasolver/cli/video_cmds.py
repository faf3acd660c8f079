"""`datasolver video`: the video room for people (keyframes, their text, speech; no model)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from datasolver.cli.output import shown
from datasolver.video import VideoOptions, analyze_path, default_cache_dir, render_report
from datasolver.video.outputs import TIMELINE_FILE, placed


@click.command("video")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the timeline as JSON ({\"videos\": [...]}).")
@click.option("--no-asr", is_flag=True, help="Skip speech recognition.")
@click.option("--no-ocr", is_flag=True, help="Skip OCR (frames are then kept by pixel change only).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write frames here (default: the scratch's derived/video/; never the input).")
def video_command(path: Path, as_json: bool, no_asr: bool, no_ocr: bool, out_dir: Path | None) -> None:
    """Turn the video and audio of PATH into a timeline: keyframes, their text and layout, speech.

    PATH is a task dir (every mp4/mov/mkv/webm/avi and mp3/wav/m4a/aac/flac under context/ that the
    input check accepts, read through a checked copy as `run` does) or one media file; each is read
    as the container its extension names, from the file alone. One frame per visual state (pixel changes, packet bursts, scene-cut keyframes;
    duplicates dropped by pixels, then by OCR text), at most 60; OCR with rapidocr; speech with
    faster-whisper and a packaged Whisper model. Deterministic, no model endpoint. Frames go to
    PATH/derived/video/<stem>/ when PATH is a prepared scratch dir, else to a scratch folder under
    the system's temp dir (or --out). Results are cached by file hash.
    """
    with placed(path, out_dir) as placement:
        report = analyze_path(placement.media, placement.out_dir, options=VideoOptions(ocr=not no_ocr, asr=not no_asr),
                              image_root=placement.image_root, cache_dir=default_cache_dir())
        report.save(placement.out_dir / TIMELINE_FILE)
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=1))
        return
    if not report.videos:
        click.echo(shown(f"no video or audio files in {path}"))
        return
    click.echo(shown(render_report(report)))  # OCR text, speech and file names come from the media
    click.echo(f"\nframes and timeline.json in {placement.out_dir}")


COMMANDS = [video_command]

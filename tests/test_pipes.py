"""The daemon's lifecycle over pipes, against the real daemon and model.

Promised:
- end of input and `shutdown` finish the work in flight and write every answer, then the
  daemon exits (0 after shutdown + exit; 0 at plain end of input), in either framing;
- `exit` without a prior shutdown ends at once (code 1), cancelling the work;
- SIGTERM / SIGINT cancel the work and exit within a second (code 0); the cancelled request
  is answered -32800 with its partial output;
- a closed stdout (the client is gone) cancels the work and the daemon exits;
- requests after `shutdown` get -32600 "server is shutting down".

Every wait is on an event (a message, end of output, process exit); timeouts only bound a
hung test. Generations are small (maxTokens 64), except the one the interrupt tests stop,
which must still be running when they interrupt it. The generating request is a session
turn: initialize and session/create are answered first (the turn needs the session's id),
then the turn is written together with what follows it (shutdown + exit, or end of input).
"""

from __future__ import annotations

import signal
import time
from typing import Any, Callable, Dict

import pytest

from conftest import GENERATION_TIMEOUT, QUICK_TIMEOUT, Daemon, is_delta, notification, request

Start = Callable[..., Daemon]

# A small generation that completes (analysis/summarize cannot: at its minimum maxTokens, 64,
# its JSON is cut short and the answer is a -32010 decodingFailure).
RESPOND_OPTIONS = {"maxTokens": 64, "seed": 7}
PROMPT = "Name three rivers and say one thing about each."
SHUTTING_DOWN = -32600
CANCELLED = -32800


def result_of(d: Daemon, id: Any) -> Dict[str, Any]:
    """The one answer to `id`, which must be a result."""
    answers = d.responses(id)
    assert len(answers) == 1, f"id {id}: {len(answers)} answers\n{d.diagnostics()}"
    assert "result" in answers[0], f"id {id}: {answers[0]}\n{d.diagnostics()}"
    return answers[0]["result"]


def check_text(d: Daemon, id: Any) -> None:
    text = result_of(d, id).get("text")
    assert isinstance(text, str) and text.strip(), f"no text in the answer to {id}\n{d.diagnostics()}"


def open_session(d: Daemon, framing: str = "ndjson", options: Dict[str, Any] = RESPOND_OPTIONS,
                 instructions: str = "You are a helpful assistant.") -> str:
    """initialize (1) and session/create (2); the session's id."""
    d.send(request(1, "initialize", {}), request(2, "session/create", {"instructions": instructions, "options": options}),
           framing=framing)
    d.response(2, QUICK_TIMEOUT)
    return result_of(d, 2)["sessionId"]


def check_framing(d: Daemon, framing: str) -> None:
    assert set(d.framings) == {framing}, f"replies in {set(d.framings)}, the client used {framing}"
    assert not d.undecodable, d.undecodable[:3]


def start_long_generation(d: Daemon) -> None:
    """initialize (1), session/create (2), then session/respond (3, token "t3") with room for
    1500 tokens; returns once the first generated delta has arrived, the answer not yet."""
    sid = open_session(d, options={"maxTokens": 1500, "seed": 7},
                       instructions="You are a storyteller. Your stories are very long and detailed.")
    d.send(request(3, "session/respond", {
        "sessionId": sid, "workDoneToken": "t3",
        "prompt": "Tell me a very long story, in many paragraphs, about a lighthouse keeper and the ships she saved."}))
    d.wait_for(lambda m: is_delta(m, "t3"), GENERATION_TIMEOUT, "the first generated delta")
    assert not d.responses(3), f"the generation ended before the interrupt; make it longer\n{d.diagnostics()}"


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_end_of_input_answers_the_work_in_flight(daemon: Start, framing: str) -> None:
    d = daemon()
    sid = open_session(d, framing)
    d.send(request(3, "session/respond", {"sessionId": sid, "prompt": PROMPT}), request(4, "session/create", {}),
           framing=framing)
    d.close_stdin()
    d.read_to_eof(GENERATION_TIMEOUT)
    assert d.wait_exit(QUICK_TIMEOUT) == 0, d.diagnostics()
    check_text(d, 3)
    assert result_of(d, 4)["sessionId"]
    check_framing(d, framing)


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_shutdown_and_exit_in_one_write_answer_the_work_first(daemon: Start, framing: str) -> None:
    d = daemon()
    sid = open_session(d, framing)
    d.send(request(3, "session/respond", {"sessionId": sid, "prompt": PROMPT}), request(4, "shutdown"),
           notification("exit"), framing=framing)
    # stdin stays open: `exit` ends the daemon, not end of input
    d.read_to_eof(GENERATION_TIMEOUT)
    assert d.wait_exit(QUICK_TIMEOUT) == 0, d.diagnostics()
    check_text(d, 3)
    assert result_of(d, 4) == {}
    assert d.index_of_response(3) < d.index_of_response(4), "shutdown answered before the work in flight"
    check_framing(d, framing)


def test_exit_during_generation_ends_at_once(daemon: Start) -> None:
    d = daemon()
    start_long_generation(d)
    t0 = time.monotonic()
    d.send(notification("exit"))
    d.read_to_eof(10)
    code = d.wait_exit(10)
    elapsed = time.monotonic() - t0
    assert code == 1, d.diagnostics()
    assert elapsed < 5, f"exit took {elapsed:.2f} s"
    # the work is cancelled, not finished: no result (a -32800 answer may be written)
    answers = d.responses(3)
    assert len(answers) <= 1 and all(a.get("error", {}).get("code") == CANCELLED for a in answers), answers


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_during_generation_answers_cancelled_with_partial_output(daemon: Start, sig: int) -> None:
    d = daemon()
    start_long_generation(d)
    t0 = time.monotonic()
    d.proc.send_signal(sig)
    d.read_to_eof(10)
    code = d.wait_exit(10)
    elapsed = time.monotonic() - t0
    assert code == 0, d.diagnostics()
    assert elapsed < 2, f"exit took {elapsed:.2f} s after the signal"
    answers = d.responses(3)
    assert len(answers) == 1, f"the cancelled request got {len(answers)} answers\n{d.diagnostics()}"
    error = answers[0].get("error")
    assert error and error["code"] == CANCELLED, answers[0]
    partial = (error.get("data") or {}).get("partial")
    streamed = d.deltas("t3")
    assert isinstance(partial, str) and partial, f"no partial output in {error}"
    assert partial.startswith(streamed), f"partial {partial!r} does not continue what was streamed {streamed!r}"


def test_closed_stdout_during_generation_exits(daemon: Start) -> None:
    d = daemon()
    start_long_generation(d)
    d.close_stdout()  # stdin stays open: only the output tells the daemon its client is gone
    code = d.wait_exit(10)
    assert code == 0, f"exit code {code}\n{d.diagnostics()}"


def test_closed_stdout_while_idle_exits(daemon: Start) -> None:
    d = daemon()
    d.send(request(1, "initialize", {}))
    d.response(1, QUICK_TIMEOUT)
    d.close_stdout()
    code = d.wait_exit(10)
    assert code == 0, f"exit code {code}\n{d.diagnostics()}"


def check_shutting_down(d: Daemon, id: Any) -> None:
    answers = d.responses(id)
    assert len(answers) == 1, f"id {id}: {len(answers)} answers\n{d.diagnostics()}"
    error = answers[0].get("error")
    assert error and error["code"] == SHUTTING_DOWN and "shutting down" in error["message"], answers[0]


def test_requests_after_shutdown_are_refused(daemon: Start) -> None:
    d = daemon()
    d.send(request(1, "initialize", {}))
    d.response(1, QUICK_TIMEOUT)
    d.send(request(2, "shutdown"))
    assert d.response(2, QUICK_TIMEOUT)["result"] == {}
    d.send(request(3, "model/status"), request(4, "session/create", {}),
           request(5, "analysis/summarize", {"text": "Alice: the launch moves to March."}))
    for id in (3, 4, 5):
        d.response(id, QUICK_TIMEOUT)
        check_shutting_down(d, id)
    d.send(notification("exit"))
    d.read_to_eof(QUICK_TIMEOUT)
    assert d.wait_exit(QUICK_TIMEOUT) == 0, d.diagnostics()


def test_request_while_shutdown_drains_is_refused_and_the_work_answered(daemon: Start) -> None:
    d = daemon()
    sid = open_session(d)
    d.send(request(3, "session/respond", {"sessionId": sid, "prompt": PROMPT}), request(4, "shutdown"),
           request(5, "model/status"), request(6, "session/create", {}), notification("exit"))
    d.read_to_eof(GENERATION_TIMEOUT)
    assert d.wait_exit(QUICK_TIMEOUT) == 0, d.diagnostics()
    check_text(d, 3)
    assert result_of(d, 4) == {}
    assert d.index_of_response(3) < d.index_of_response(4), "shutdown answered before the work in flight"
    check_shutting_down(d, 5)
    check_shutting_down(d, 6)

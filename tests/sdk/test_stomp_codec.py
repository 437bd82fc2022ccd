"""The STOMP frame codec shared by the SDK and the built-in broker: what goes on the wire and back."""

from __future__ import annotations

import pytest

from wasdi_sdk.events.stomp import (
    Frame,
    FrameError,
    FrameParser,
    encode,
    heartbeat_periods,
    negotiate_version,
    parse_all,
    parse_heartbeat,
)


def test_a_frame_goes_and_comes_back_whole() -> None:
    frame = Frame.make("MESSAGE", {"destination": "/exchange/amq.topic/ws", "subscription": "a:b\nc\\d"},
                       b'{"x":"\x00 inside"}')
    data = encode(frame)
    assert data.startswith(b"MESSAGE\n") and data.endswith(b"\x00")
    assert b"subscription:a\\cb\\nc\\\\d" in data  # escaped as 1.1 and 1.2 want
    (back,) = parse_all(data)
    assert back.command == "MESSAGE" and back.body == frame.body  # content-length lets NUL inside the body
    assert back.header("subscription") == "a:b\nc\\d" and back.header("content-length") == str(len(frame.body))


def test_connect_frames_and_1_0_are_never_escaped() -> None:
    data = encode(Frame.make("CONNECT", {"passcode": "a:b"}))
    assert b"passcode:a:b\n" in data
    (back,) = parse_all(data)
    assert back.header("passcode") == "a:b"
    assert parse_all(encode(Frame.make("SEND", {"x": "a\\b"}), version="1.0"), version="1.0")[0].header("x") == "a\\b"


def test_the_parser_takes_bytes_as_they_come() -> None:
    stream = encode(Frame.make("RECEIPT", {"receipt-id": "1"})) + b"\n\r\n" + encode(Frame.make("MESSAGE", {}, b"hi"))
    parser = FrameParser()
    out: list[Frame | None] = []
    for i in range(len(stream)):  # one byte at a time: frames split anywhere
        out += parser.feed(stream[i:i + 1])
    commands = [f.command if f is not None else "heart-beat" for f in out]
    assert commands == ["RECEIPT", "heart-beat", "heart-beat", "MESSAGE"]
    assert out[-1] is not None and out[-1].body == b"hi"


def test_a_frame_without_content_length_ends_at_nul_and_crlf_heads_are_read() -> None:
    (frame,) = parse_all(b"ERROR\r\nmessage:no\r\n\r\nwhy\x00")
    assert frame.header("message") == "no" and frame.body == b"why"
    # Repeated headers: the first one counts.
    (frame,) = parse_all(b"MESSAGE\nfoo:1\nfoo:2\n\n\x00")
    assert frame.header("foo") == "1"


@pytest.mark.parametrize("data", [b"\n\nx\x00", b"SEND\nnocolon\n\n\x00", b"SEND\nx:\\q\n\n\x00",
                                  b"SEND\ncontent-length:2\n\nabc\x00", b"SEND\ncontent-length:x\n\n\x00"])
def test_malformed_frames_are_refused(data: bytes) -> None:
    with pytest.raises(FrameError):
        parse_all(data)


def test_a_frame_larger_than_allowed_is_refused() -> None:
    parser = FrameParser(max_frame_bytes=100)
    with pytest.raises(FrameError):
        parser.feed(b"SEND\n\n" + b"x" * 200)


def test_versions_and_heart_beats_are_negotiated() -> None:
    assert negotiate_version(None) == "1.0"
    assert negotiate_version("1.1,1.0") == "1.1"
    assert negotiate_version("1.2, 1.1") == "1.2"
    assert negotiate_version("2.0") is None
    assert parse_heartbeat("20000,20000") == (20000, 20000)
    assert parse_heartbeat("junk") == (0, 0) and parse_heartbeat(None) == (0, 0)
    # (we send every, we expect every): the larger of what one end can and the other wants; 0 means never.
    assert heartbeat_periods((10000, 10000), (20000, 20000)) == (20000, 20000)
    assert heartbeat_periods((10000, 10000), (0, 5000)) == (10000, 0)
    assert heartbeat_periods((0, 0), (1000, 1000)) == (0, 0)

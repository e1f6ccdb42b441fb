"""parlance_client — a Parlance client in the Python standard library only.

Spawns ``parlance --stdio`` and speaks JSON-RPC 2.0 with NDJSON or LSP framing, with
progress callbacks (streamed text), cancellation and typed errors. See README.md next to
this package and protocol/README.md for the protocol itself.
"""

from .client import (
    ERROR_NAMES,
    ConnectionClosed,
    ParlanceClient,
    PendingRequest,
    RPCError,
    find_binary,
)
from .framing import Frame, FrameDecoder, Framing, encode, frame

__all__ = [
    "ERROR_NAMES",
    "ConnectionClosed",
    "Frame",
    "FrameDecoder",
    "Framing",
    "ParlanceClient",
    "PendingRequest",
    "RPCError",
    "encode",
    "find_binary",
    "frame",
]

__version__ = "0.1.0"

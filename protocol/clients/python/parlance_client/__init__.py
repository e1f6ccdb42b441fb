"""parlance_client — a Parlance client in the Python standard library only.

Spawns ``parlance --stdio`` and speaks JSON-RPC 2.0 with NDJSON or LSP framing, with
progress callbacks (streamed text), cancellation, typed errors and tools (Python
functions the model calls during ``session/respond``). See README.md next to this package
and protocol/README.md for the protocol itself.
"""

from .client import (
    ERROR_NAMES,
    TOOL_CALL,
    ConnectionClosed,
    ParlanceClient,
    PendingRequest,
    RPCError,
    find_binary,
)
from .framing import Frame, FrameDecoder, Framing, encode, frame
from .tools import (
    Tool,
    ToolArgumentsError,
    ToolInvocation,
    current_tool_call,
    function_schema,
    json_content,
    tool_from_function,
)

__all__ = [
    "ERROR_NAMES",
    "TOOL_CALL",
    "ConnectionClosed",
    "Frame",
    "FrameDecoder",
    "Framing",
    "ParlanceClient",
    "PendingRequest",
    "RPCError",
    "Tool",
    "ToolArgumentsError",
    "ToolInvocation",
    "current_tool_call",
    "encode",
    "find_binary",
    "frame",
    "function_schema",
    "json_content",
    "tool_from_function",
]

__version__ = "0.2.0"

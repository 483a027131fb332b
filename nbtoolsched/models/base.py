"""The Model protocol and ModelError, for model adapters.

They are defined in the agent layer (``nbtoolsched.agent.protocol``), which drives
them; this module re-exports them so adapters and users find them next to the models.
"""

from ..agent.protocol import RETRYABLE_KINDS, ErrorKind, Model, ModelError, kind_for_error_type, kind_for_status

__all__ = ["Model", "ModelError", "ErrorKind", "RETRYABLE_KINDS", "kind_for_status", "kind_for_error_type"]

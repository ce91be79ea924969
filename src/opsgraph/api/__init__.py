"""The HTTP surface: one Starlette app (SSE for runs), Lambda handlers around it."""

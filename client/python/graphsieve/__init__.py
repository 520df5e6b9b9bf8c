"""graphsieve's protocol buffers (proto/graphsieve/), as protoc generates them for Python."""

"""What game clients use: acting with the published ONNX policy (no torch anywhere here)."""

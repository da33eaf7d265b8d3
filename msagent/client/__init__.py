"""What game clients use: uploading episodes to and downloading models from the gateway
(:class:`GatewayClient`), and acting with the published ONNX policy (no torch anywhere here)."""

from msagent.client.http import GatewayClient, GatewayError

__all__ = ["GatewayClient", "GatewayError"]

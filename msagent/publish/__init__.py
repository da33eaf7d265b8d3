"""Publishing the acting policy for game clients: ONNX export and the versioned model store.

``msagent.publish.model_store`` needs no torch (the gateway imports it);
``msagent.publish.onnx_export`` does.
"""

"""Publishing the acting policy for game clients: ONNX export and the versioned model store.

``msagent.exporting.model_store`` needs no torch (the gateway imports it);
``msagent.exporting.onnx_export`` does.
"""

"""Services built on the runtime (env worker, inference, learner, buffer, model pool)."""

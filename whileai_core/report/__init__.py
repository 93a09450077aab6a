"""What people look at: the self-contained HTML report, MLflow tracking, token usage and cost."""

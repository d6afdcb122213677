"""Stand-in for sglang-router in the real-systemd test container (see pd_standin)."""

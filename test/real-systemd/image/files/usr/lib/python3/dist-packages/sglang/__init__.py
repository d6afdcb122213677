"""Stand-in for SGLang in the real-systemd test container (see pd_standin)."""

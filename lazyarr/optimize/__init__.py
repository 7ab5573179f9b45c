"""Plans and the passes that rewrite them (``Plan -> Plan``), plus the cost model."""

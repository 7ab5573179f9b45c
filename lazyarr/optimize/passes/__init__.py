"""Optimization passes, one pure ``run(plan, ctx) -> Plan`` per module."""

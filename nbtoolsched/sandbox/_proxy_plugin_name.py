"""Where the proxy process finds its plugin and policy (no proxy.py import here)."""

PLUGIN = "nbtoolsched.sandbox._proxy_plugin.SandboxDomainFilter"
POLICY_VAR = "NBTOOLSCHED_PROXY_POLICY"

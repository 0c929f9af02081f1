package topology

// The fixtures are shared with the external test package, which talks to real servers.
var (
	Layer3Fixture   = layer3State
	OKEP5094Fixture = okep5094State
)

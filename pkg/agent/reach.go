package agent

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// reachTimeout bounds one look at whether a node's server answers: the heartbeat looks
// every second, and a server that takes longer to accept a connection is as good as
// gone for the agent.
const reachTimeout = time.Second

// reachable returns nil when something accepts a connection at an OVSDB endpoint
// ("unix:PATH", "tcp:HOST:PORT" or "ssl:HOST:PORT", whose TLS is not checked), and
// otherwise an error naming what (the node's Open vSwitch database, say) and the
// endpoint.
//
// The agent's OVSDB clients cannot tell: while they reconnect, their reads wait for a
// consistent cache until their context ends and then return the rows last seen, and
// they send nothing when nothing changed. So an agent whose OVS went away would go on
// reporting success.
func reachable(ctx context.Context, what, endpoint string) error {
	network, address, ok := strings.Cut(endpoint, ":")
	switch {
	case !ok || address == "":
		return fmt.Errorf("%s %q: not an OVSDB endpoint (unix:PATH, tcp:HOST:PORT or ssl:HOST:PORT)", what, endpoint)
	case network == "ssl":
		network = "tcp"
	case network != "unix" && network != "tcp":
		return fmt.Errorf("%s %s: cannot check a %q endpoint: use unix:, tcp: or ssl:", what, endpoint, network)
	}
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
	if err != nil {
		return fmt.Errorf("%s %s is unreachable: %w", what, endpoint, err)
	}
	return conn.Close()
}

// ovsDatabase names the node's Open vSwitch database in errors.
const ovsDatabase = "Open vSwitch database"

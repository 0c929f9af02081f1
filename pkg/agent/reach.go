package agent

import (
	"context"
	"errors"
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
		// The dial error repeats the address the endpoint already names: keep its
		// cause alone, so the message names the endpoint once.
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Err != nil {
			return fmt.Errorf("%s %s is unreachable: %s: %w", what, endpoint, opErr.Op, opErr.Err)
		}
		return fmt.Errorf("%s %s is unreachable: %w", what, endpoint, err)
	}
	return conn.Close()
}

// nbDown says why the agent is not connected to its node's NB, nil while connected
// is true: the first endpoint that does not accept a connection, or, when one does,
// that the client has not reconnected to it yet. The NB client notices a lost
// connection on its own but says nothing of it (it reconnects in the background, and
// its reads meanwhile return the rows last seen).
func nbDown(ctx context.Context, connected func() bool, endpoints []string) error {
	if connected() {
		return nil
	}
	var errs []error
	for _, ep := range endpoints {
		err := reachable(ctx, nbDatabase, ep)
		if err == nil {
			return fmt.Errorf("%s %s accepts connections, but the agent has not reconnected to it yet", nbDatabase, ep)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// nbDatabase names the node's OVN northbound database in errors.
const nbDatabase = "OVN northbound database"

// ovsDatabase names the node's Open vSwitch database in errors.
const ovsDatabase = "Open vSwitch database"

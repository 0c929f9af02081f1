package ovsdbconn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ovnk/ovnk/pkg/ovn"
	"github.com/ovnk/ovnk/pkg/ovsdbconn"
	"github.com/ovnk/ovnk/test/testenv"
)

// TestConnectedSeesTheServerGo stops a real NB under a connected client, as the
// agent's NB may go away: Connected must turn false within seconds (libovsdb's own
// Connected stayed true, so the agent reported a lost NB as connected).
func TestConnectedSeesTheServerGo(t *testing.T) {
	nb := testenv.StartNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ovn.ConnectNB(ctx, ovn.NBConfig{Endpoints: []string{nb.Endpoint}, InactivityProbe: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if !ovsdbconn.Connected(c) {
		t.Fatalf("a client connected to %s is not Connected", nb.Endpoint)
	}
	nb.Process.Stop()
	err = testenv.Eventually(ctx, 5*time.Second, "Connected false once the NB is gone", func(context.Context) error {
		if ovsdbconn.Connected(c) {
			return errors.New("still connected")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package agent

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
)

func TestReachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "db.sock")
	unixL, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer unixL.Close()
	tcpL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedTCP := tcpL.Addr().String()
	tcpL.Close() // a port nobody listens on any more
	tcpL, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcpL.Close()

	for _, tc := range []struct {
		endpoint string
		// wantErr is a part of the error; "" for none.
		wantErr string
	}{
		{"unix:" + sock, ""},
		{"tcp:" + tcpL.Addr().String(), ""},
		{"ssl:" + tcpL.Addr().String(), ""},
		{"unix:" + sock + ".missing", "Open vSwitch database unix:" + sock + ".missing is unreachable: dial: connect: no such file or directory"},
		{"tcp:" + closedTCP, "Open vSwitch database tcp:" + closedTCP + " is unreachable: dial: connect: connection refused"},
		{"punix:" + sock, `cannot check a "punix" endpoint`},
		{sock, "not an OVSDB endpoint"},
	} {
		err := reachable(context.Background(), ovsDatabase, tc.endpoint)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("reachable(%s): %v, want nil", tc.endpoint, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("reachable(%s): %v, want an error with %q", tc.endpoint, err, tc.wantErr)
		}
	}
}

// TestNBDown: nothing while connected; the endpoint, named once, and why when its
// server is gone; and when the server is back but the client is not yet.
func TestNBDown(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "nb.sock")
	endpoint := "unix:" + sock
	connected := true
	isConnected := func() bool { return connected }
	if err := nbDown(context.Background(), isConnected, []string{endpoint}); err != nil {
		t.Errorf("connected: %v, want nil", err)
	}
	connected = false
	err := nbDown(context.Background(), isConnected, []string{endpoint})
	want := "OVN northbound database " + endpoint + " is unreachable: dial: connect: no such file or directory"
	if err == nil || err.Error() != want {
		t.Errorf("server gone: %v, want %q", err, want)
	}
	if err != nil && strings.Count(err.Error(), sock) != 1 {
		t.Errorf("%q names the endpoint more than once", err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = nbDown(context.Background(), isConnected, []string{endpoint})
	if err == nil || !strings.Contains(err.Error(), endpoint+" accepts connections, but the agent has not reconnected") {
		t.Errorf("server back, client not: %v", err)
	}
}

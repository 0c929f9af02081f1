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
		{"unix:" + sock + ".missing", "Open vSwitch database unix:" + sock + ".missing is unreachable: dial unix " + sock + ".missing: connect: no such file or directory"},
		{"tcp:" + closedTCP, "Open vSwitch database tcp:" + closedTCP + " is unreachable: dial tcp " + closedTCP + ": connect: connection refused"},
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

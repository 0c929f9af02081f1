package agent

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func TestWithReachableReportsTheDatabaseFirst(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "db.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var zoneErr error
	down := func(ctx context.Context) error { return reachable(ctx, ovsDatabase, "unix:"+sock) }
	outcome := withReachable(func() (time.Time, error) { return at, zoneErr }, down)

	if got, err := outcome(); !got.Equal(at) || err != nil {
		t.Errorf("database up, zone fine: %v, %v; want %v, nil", got, err, at)
	}
	zoneErr = errors.New("apply zone n1: transaction failed")
	if _, err := outcome(); !errors.Is(err, zoneErr) || err.Error() != zoneErr.Error() {
		t.Errorf("database up, zone failed: %v, want the zone's error alone", err)
	}
	l.Close() // removes the socket
	got, err := outcome()
	if !got.Equal(at) {
		t.Errorf("database down: last reconcile %v, want %v kept", got, at)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "Open vSwitch database unix:"+sock+" is unreachable") || !errors.Is(err, zoneErr) {
		t.Errorf("database down, zone failed: %v; want the database first, then the zone's error", err)
	}
	zoneErr = nil
	if _, err := outcome(); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("database down, zone fine: %v; want the database alone", err)
	}
}

// Package nbfake is an OVN Northbound database in memory, for tests that would
// otherwise need an ovsdb-server.
//
// It serves the NB schema the models of package nbdb were generated from on a unix
// socket, through libovsdb's own OVSDB server, so the real client (ovn.ConnectNB, with
// or without LeaderOnly) connects, monitors and transacts exactly as it does against
// ovsdb-server. libovsdb's in-memory database already keeps references whole (strong
// references to missing rows refused, weak ones dropped, unreferenced non-root rows
// collected) and indexes unique. Over it the fake checks what ovsdb-server checks and
// libovsdb does not: the types of values, enums, integer ranges and string lengths,
// the sizes of sets, what mutations leave behind, duplicate UUIDs; it gives a column an
// insert leaves out ovsdb-server's default, and selects ovsdb-server's columns. A
// transaction with one failing operation changes nothing.
//
// The conformance test of this package runs one table of transactions against the fake
// and against a real ovsdb-server and requires the same outcome and the same rows from
// both. The cases where they cannot agree stay in the table, marked with why; they are
// listed in docs/testing.md.
package nbfake

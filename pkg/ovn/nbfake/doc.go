// Package nbfake is an OVN Northbound database in memory, for tests that would
// otherwise need an ovsdb-server.
//
// It serves the NB schema the models of package nbdb were generated from on a unix
// socket, through libovsdb's own OVSDB server, so the real client (ovn.ConnectNB)
// connects, monitors and transacts exactly as it does against ovsdb-server. Over
// libovsdb's in-memory database it checks what ovsdb-server checks and libovsdb does
// not: the types of values, enums, ranges and lengths, the sizes of sets, and the
// defaults of columns that must hold a value. A transaction with one failing operation
// changes nothing.
//
// The conformance test of this package runs one table of transactions against the fake
// and against a real ovsdb-server and requires the same outcome from both; the cases
// where they cannot agree are marked there and listed in docs/testing.md.
package nbfake

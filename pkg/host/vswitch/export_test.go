package vswitch

// Transactions returns how many transactions the client has sent, so tests outside the
// package can assert that a call which changes nothing sends nothing.
func (c *Client) Transactions() uint64 { return c.txns.Load() }

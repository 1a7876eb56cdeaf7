package dpop

// Memory is what Module remembers.
const Memory = memory

// Spend is the last step of Verify, after the signature, the claims and the nonce: spend
// the jti of a proof by key jkt made at iat. The load tests drive millions of proofs
// through it; signing each would take the test minutes.
func Spend(c *Checker, jkt, jti string, iat int64) bool {
	return c.spend(Proof{JKT: jkt, JTI: jti, iat: iat}, c.clock.Now()) == nil
}

// SpendAll is Spend for proofs sent at the same time, under one hold of the memory's lock
// (the load tests' millions run quicker so under the race detector).
func SpendAll(c *Checker, jkts, jtis []string, iats []int64, taken []bool) {
	sec := c.clock.Now().Unix()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range jtis {
		key, jti := c.keys(Proof{JKT: jkts[i], JTI: jtis[i]})
		taken[i] = c.spendLocked(key, jti, iats[i], sec) == nil
	}
}

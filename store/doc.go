// Package store implements Store twice: Memory, an embedded store
// for a single replica (state lost on restart), and Redis, shared by every
// replica through Redis single node, Sentinel or Cluster.
//
// It is the only package of alertrouter that imports go-redis. Both stores
// pass the same conformance suite, storetest.Run.
package store

package main

import (
	"crypto/sha256"
	"os"
)

// fileSums is the SHA-256 of each file's content ("" for a file that
// cannot be read), to tell when a secret file was rotated.
func fileSums(paths []string) map[string]string {
	out := make(map[string]string, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			out[p] = ""
			continue
		}
		sum := sha256.Sum256(b)
		out[p] = string(sum[:])
	}
	return out
}

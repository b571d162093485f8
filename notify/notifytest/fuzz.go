package notifytest

import "unicode/utf8"

// AsDecoded is s as the webhook decoder hands it on: encoding/json
// replaces each byte of invalid UTF-8 by U+FFFD. The fuzz targets of the
// integrations give the builders their texts so.
func AsDecoded(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}

// PrefixEnd is the length of the longest prefix of p that s ends with
// (Knuth–Morris–Pratt): where in p a cut of p that s ends with fell.
func PrefixEnd(s, p string) int {
	if p == "" {
		return 0
	}
	fail := make([]int, len(p)+1)
	fail[0] = -1
	for i, k := 1, -1; i <= len(p); i++ {
		for k >= 0 && p[k] != p[i-1] {
			k = fail[k]
		}
		k++
		fail[i] = k
	}
	k := 0
	for i := 0; i < len(s); i++ {
		if k == len(p) {
			k = fail[k]
		}
		for k >= 0 && p[k] != s[i] {
			k = fail[k]
		}
		k++
	}
	return k
}

package hedginghttp

import (
	"net/url"
	"strings"
	"testing"
)

// sameOriginByParse is sameOrigin's rule written the slow way (every host
// parsed): the reference the quick reject must agree with.
func sameOriginByParse(b *baseURL, u *url.URL) bool {
	return strings.EqualFold(u.Scheme, b.u.Scheme) && strings.EqualFold(u.Hostname(), b.hostname) && portOf(u) == b.port
}

func TestSameOrigin(t *testing.T) {
	cases := []struct {
		base, req string
		want      bool
	}{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/docs/1", true},
		{"http://b.invalid", "http://127.0.0.1:8080/docs/1", false},
		{"http://a.example", "HTTP://A.EXAMPLE:80/x", true},
		{"http://a.example:80", "http://a.example/x", true},
		{"https://a.example", "https://a.example:443/x", true},
		{"https://a.example", "https://a.example:8443/x", false},
		{"http://a.example", "http://a.example.org/x", false},
		{"http://a.example.org", "http://a.example/x", false},
		{"http://a.example", "http://b.example/x", false},
		{"http://[::1]:80", "http://[::1]/x", true},
		{"http://[::1]", "http://[::2]/x", false},
		{"http://k.example", "http://\u212a.example/x", true}, // Kelvin sign folds to k: a longer Host, same name
		{"http://\u212a.example", "http://k.example/x", true},
		{"http://a.example", "https://a.example/x", false},
		{"http://ab.example", "http://a:80/x", false}, // shorter than the base's name
		{"http://A.Example", "http://a.examplf/x", false},
	}
	for _, tc := range cases {
		b, err := parseBase(tc.base, false)
		if err != nil {
			t.Fatalf("parseBase(%q): %v", tc.base, err)
		}
		u, err := url.Parse(tc.req)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", tc.req, err)
		}
		if got := b.sameOrigin(u); got != tc.want {
			t.Errorf("sameOrigin(%q, %q) = %v, want %v", tc.base, tc.req, got, tc.want)
		}
		if ref := sameOriginByParse(&b, u); ref != tc.want {
			t.Errorf("reference(%q, %q) = %v, want %v (bad row)", tc.base, tc.req, ref, tc.want)
		}
	}
}

// TestSameOriginAgreesWithParse checks sameOrigin against the full parse on
// every pairing of a set of bases and request hosts (case, default and
// explicit ports, IPv6 literals, non-ASCII names that fold to ASCII).
func TestSameOriginAgreesWithParse(t *testing.T) {
	hosts := []string{"a.example", "A.EXAMPLE", "a.example:80", "a.example:443", "a.example:8080", "a.exampl", "a.example.org",
		"b.example", "127.0.0.1:8080", "127.0.0.1", "[::1]", "[::1]:80", "\u212a.example", "k.example", "K.example:80", "a", "x"}
	for _, scheme := range []string{"http", "https"} {
		for _, bh := range hosts {
			b, err := parseBase(scheme+"://"+bh, false)
			if err != nil {
				t.Fatalf("parseBase(%q): %v", bh, err)
			}
			for _, rs := range []string{"http", "HTTPS"} {
				for _, h := range hosts {
					u, err := url.Parse(rs + "://" + h + "/p")
					if err != nil {
						t.Fatalf("url.Parse(%q): %v", h, err)
					}
					if got, want := b.sameOrigin(u), sameOriginByParse(&b, u); got != want {
						t.Errorf("sameOrigin(%s://%s, %s) = %v, the parse says %v", scheme, bh, u, got, want)
					}
				}
			}
		}
	}
}

// addressedEagerly is addressed's rule with every rest computed by match:
// the reference the lazy rest (addresses, restOf) must agree with.
func addressedEagerly(bases []keyedBase, u *url.URL) (key, rest string, ok bool) {
	best := -1
	for i := range bases {
		b := &bases[i].base
		r, m := b.match(u)
		if m && len(b.prefix) > best {
			best, key, rest = len(b.prefix), bases[i].key, r
		}
	}
	return key, rest, best >= 0
}

// addressedAgrees fails t unless addressed and its lazy rest give what
// the eager rule gives for u.
func addressedAgrees(t *testing.T, bases []keyedBase, u *url.URL) {
	t.Helper()
	key, rest, ok := addressedEagerly(bases, u)
	at := addressed(bases, u)
	if at.ok != ok || (ok && (at.key != key || at.restOf(u) != rest)) {
		t.Fatalf("addressed(%q) = %q %q %v, the eager rule %q %q %v", u, at.key, at.restOf(u), at.ok, key, rest, ok)
	}
}

// bxBases are bases with and without path prefixes, on one host and on
// others.
func bxBases(t *testing.T) []keyedBase {
	t.Helper()
	var bases []keyedBase
	for i, s := range []string{"http://a.example", "http://a.example/west", "http://a.example/west/x", "https://b.example", "http://c.example/p%2Fq"} {
		b, err := parseBase(s, false)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, keyedBase{string(rune('A' + i)), b})
	}
	sortBases(bases)
	return bases
}

// The lazy rest of a base without a path (the happy path's) agrees with
// the eager one for paths with and without a leading '/', escaped and raw
// paths, "*", and prefixes at and off a '/' boundary.
func TestAddressedLazyRest(t *testing.T) {
	bases := bxBases(t)
	for _, s := range []string{
		"http://a.example", "http://a.example/", "http://a.example/docs/1", "http://a.example/west", "http://a.example/westx",
		"http://a.example/west/x/y", "http://a.example/a%2Fb", "http://a.example/a%20b", "http://a.example/a b", "http://a.example/%7Ex",
		"HTTP://A.EXAMPLE:80/docs", "https://b.example/docs?q=1", "http://c.example/p%2Fq/r", "http://c.example/p/q/r", "http://d.example/x",
	} {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		addressedAgrees(t, bases, u)
	}
	for _, u := range []*url.URL{
		{Scheme: "http", Host: "a.example", Path: "*"},
		{Scheme: "http", Host: "a.example", Path: "docs/1"},
		{Scheme: "http", Host: "a.example", Path: "/a/b", RawPath: "%2Fa/b"},
		{Scheme: "http", Host: "a.example", Path: "/a/b", RawPath: "/a%2Fb"},
		{Scheme: "http", Host: "a.example", Path: "/a b", RawPath: "/a%20b"},
		{Scheme: "http", Host: "a.example", Path: "/west", RawPath: "/w%65st"},
		{Scheme: "http", Host: "a.example", Path: "", RawPath: "x"},
		{Scheme: "http", Host: "a.example", Opaque: "//a.example/docs"},
		nil,
	} {
		addressedAgrees(t, bases, u)
	}
}

// FuzzAddressedLazyRest checks the lazy rest against the eager rule for
// any path and raw path.
func FuzzAddressedLazyRest(f *testing.F) {
	for _, s := range [][2]string{{"/docs/1", ""}, {"*", ""}, {"docs", ""}, {"/a/b", "%2Fa/b"}, {"/west/x", "/west%2Fx"}, {"", "x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, path, raw string) {
		bases := bxBases(t)
		for _, host := range []string{"a.example", "c.example"} {
			addressedAgrees(t, bases, &url.URL{Scheme: "http", Host: host, Path: path, RawPath: raw})
		}
	})
}

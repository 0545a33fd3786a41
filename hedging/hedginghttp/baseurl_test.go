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

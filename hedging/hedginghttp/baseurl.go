package hedginghttp

import (
	"fmt"
	"net/url"
	"strings"
)

// baseURL is a region's base URL, "scheme://host[:port][/prefix]", parsed
// once. A request URL addresses a base when scheme and host name are equal
// ignoring case, the ports are equal once the scheme's default port (80,
// 443) fills an absent one, and the request's path lies under the prefix
// (at a '/' boundary). The one rewrite of a request for another region is
// [baseURL.rebase].
type baseURL struct {
	u        *url.URL // as parsed: Scheme and Host are sent as written
	hostname string   // u.Hostname()
	port     string   // u.Port(), or the scheme's default port
	prefix   string   // escaped path without trailing '/' ("" for none)
	ascii    bool     // hostname is ASCII and no IPv6 literal (sameOrigin's quick reject applies)
}

// parseBase parses a region's base URL. strict (NewRoundTripper) also
// requires an http or https scheme and rejects a query, fragment or user
// information; Transport's BaseURLs are parsed leniently.
func parseBase(s string, strict bool) (baseURL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return baseURL{}, err
	}
	if u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return baseURL{}, fmt.Errorf("URL %q: want scheme://host[/path]", s)
	}
	if strict {
		switch {
		case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"):
			return baseURL{}, fmt.Errorf("URL %q: scheme %q: want http or https", s, u.Scheme)
		case u.User != nil:
			return baseURL{}, fmt.Errorf("URL %q: user information in a region URL is not sent; set credentials with WithPrepare", s)
		case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
			return baseURL{}, fmt.Errorf("URL %q: a region URL has no query or fragment", s)
		case u.Hostname() == "":
			return baseURL{}, fmt.Errorf("URL %q: empty host name", s)
		}
	}
	return baseURL{u: u, hostname: u.Hostname(), port: portOf(u), prefix: strings.TrimSuffix(u.EscapedPath(), "/"),
		ascii: isASCII(u.Hostname()) && !strings.HasPrefix(u.Host, "[")}, nil
}

// portOf returns u's port, or the default port of its scheme (80 for http,
// 443 for https; "" for another scheme without a port).
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// sameOrigin reports whether u has b's scheme, host name and port, compared
// canonically (case-insensitive names, default ports made explicit).
func (b *baseURL) sameOrigin(u *url.URL) bool {
	if u.Host == b.u.Host && u.Scheme == b.u.Scheme {
		return true // spelled alike: the common case, without parsing the host
	}
	// Another host is the common miss (a request for another region): its
	// quick reject comes before the scheme's comparison.
	if b.ascii && u.Host != "" && u.Host[0] != '[' && otherASCIIHost(u.Host, b.hostname) {
		return false
	}
	if !strings.EqualFold(u.Scheme, b.u.Scheme) {
		return false
	}
	return strings.EqualFold(u.Hostname(), b.hostname) && portOf(u) == b.port
}

// isASCII reports whether s holds only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// otherASCIIHost reports whether host (a URL's Host, no IPv6 literal)
// names a host other than name (ASCII), without parsing host: outside an
// IPv6 literal the host name is a prefix of Host, so an ASCII byte of
// host's first len(name) that differs from name's ignoring case, or a
// host shorter than name, settles it; a non-ASCII byte there (which may
// fold to an ASCII letter, as the Kelvin sign does to k) leaves it to the
// parse (false). The common case is a request for another region, decided
// at its first byte.
func otherASCIIHost(host, name string) bool {
	if len(host) < len(name) {
		return true
	}
	for i := 0; i < len(name); i++ {
		c, n := host[i], name[i]
		if c >= 0x80 {
			return false
		}
		if c != n && lower(c) != lower(n) {
			return true
		}
	}
	return false
}

// lower maps an ASCII upper-case letter to lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// match returns the escaped path of u below b's prefix ("" or starting with
// '/') and true when u addresses b.
func (b *baseURL) match(u *url.URL) (rest string, ok bool) {
	if u == nil || !b.sameOrigin(u) {
		return "", false
	}
	p := u.EscapedPath()
	if !strings.HasPrefix(p, b.prefix) {
		return "", false
	}
	rest = p[len(b.prefix):]
	if rest != "" && rest[0] != '/' {
		return "", false // "/ab" is not under "/a"
	}
	return rest, true
}

// addresses is match for [addressed]: it reports whether u addresses b
// and returns the rest when computing it was needed to decide (lazy is
// false), or leaves it to restOf (lazy): for a base without a path prefix
// and a URL without a RawPath, u addresses b exactly when u.Path is empty
// or starts with '/' (u.EscapedPath is then url's escaping of u.Path, or
// "*", which starts with '/' exactly when u.Path does), so the escaping,
// which only a request sent to another region needs, is not done here.
func (b *baseURL) addresses(u *url.URL) (rest string, lazy, ok bool) {
	if b.prefix == "" && u != nil && u.RawPath == "" {
		if !b.sameOrigin(u) {
			return "", false, false
		}
		return "", true, u.Path == "" || u.Path[0] == '/'
	}
	rest, ok = b.match(u)
	return rest, false, ok
}

// equal reports whether two bases address the same requests.
func (b *baseURL) equal(o *baseURL) bool { return b.sameOrigin(o.u) && b.prefix == o.prefix }

// rebase rewrites u, a request URL that addressed another base (rest is
// what that base's match returned), to address b instead: b's scheme and
// host, b's prefix followed by rest; query and fragment are kept. This is
// the one rewrite of a request for another region.
func (b *baseURL) rebase(u *url.URL, rest string) error {
	esc := b.prefix + rest
	path, err := url.PathUnescape(esc)
	if err != nil {
		return fmt.Errorf("hedginghttp: rewriting the path %q for %s: %w", esc, b.u.Redacted(), err)
	}
	u.Scheme, u.Host, u.User = b.u.Scheme, b.u.Host, nil
	u.Path, u.RawPath = path, esc
	return nil
}

package scenarios

import (
	"os"
	"strings"
	"testing"
	"time"

	"hedgelab/hedging"
	"hedgelab/simnet"
)

// Every capacity key's validation error, with file and line.
func TestCapacityErrors(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	const bg = "rate_per_s = 100\n[[background]]\ntarget = \"westus\"\n"
	for _, c := range []struct{ name, edit, with, want string }{
		{"queue limit negative", "servers = 4", "servers = 4\nqueue_limit = -1", `x.toml:26: replicas.westus.queue_limit: must be between 0 and 1000000, got -1`},
		{"queue limit without servers", "region = \"East US\"\nservice", "region = \"East US\"\nqueue_limit = 10\nservice", `x.toml:20: replicas.eastus.queue_limit: needs servers > 0 (a replica without servers has no queue)`},
		{"overflow status unknown", "servers = 4", "servers = 4\nqueue_limit = 10\noverflow_status = \"500\"", `x.toml:27: replicas.westus.overflow_status: unknown status "500" (want "503", "429/3200" or "408")`},
		{"overflow status without limit", "servers = 4", "servers = 4\noverflow_status = \"408\"", `x.toml:26: replicas.westus.overflow_status: applies only with queue_limit > 0`},
		{"overflow status not a string", "servers = 4", "servers = 4\nqueue_limit = 10\noverflow_status = 503", `x.toml:27: replicas.westus.overflow_status: must be a string, got an integer`},
		{"overflow status empty", "servers = 4", "servers = 4\nqueue_limit = 10\noverflow_status = \"\"", `x.toml:27: replicas.westus.overflow_status: unknown status "" (want "503", "429/3200" or "408")`},
		{"cancel mode empty", "servers = 4", "servers = 4\ncancel = \"\"", `x.toml:26: replicas.westus.cancel: unknown mode "" (want "queued", "in_service", "none" or "on_start")`},
		{"cancel mode", "servers = 4", "servers = 4\ncancel = \"in-service\"", `x.toml:26: replicas.westus.cancel: unknown mode "in-service" (want "queued", "in_service", "none" or "on_start")`},
		{"background target missing", "rate_per_s = 100", "rate_per_s = 100\n[[background]]\nrate_per_s = 5", `x.toml:33: background.0.target: required (a replica name or physical region)`},
		{"background target unknown", "rate_per_s = 100", "rate_per_s = 100\n[[background]]\ntarget = \"Mars\"\nrate_per_s = 5", `x.toml:34: background.0.target: unknown target "Mars" (want a replica name or region: East US, West US, eastus, westus)`},
		{"background rate missing", "rate_per_s = 100", bg, `x.toml:33: background.0.rate_per_s: must be > 0 (requests per second at each targeted replica), got 0`},
		{"background rate negative", "rate_per_s = 100", bg + "rate_per_s = -3", `x.toml:35: background.0.rate_per_s: must be > 0 (requests per second at each targeted replica), got -3`},
		{"background service", "rate_per_s = 100", bg + "rate_per_s = 5\nservice = { family = \"lognormal\", median_ms = 4.0, p99_ms = 3.0 }", `x.toml:36: background.0.service: lognormal: p99_ms (3) must be greater than median_ms (4)`},
		{"background start negative", "rate_per_s = 100", bg + "rate_per_s = 5\nstart_s = -1", `x.toml:36: background.0.start_s: must be >= 0, got -1`},
		{"background start after the run", "rate_per_s = 100", bg + "rate_per_s = 5\nstart_s = 10", `x.toml:36: background.0.start_s: must be < duration_s (10), got 10`},
		{"background end before start", "rate_per_s = 100", bg + "rate_per_s = 5\nstart_s = 4\nend_s = 2", `x.toml:37: background.0.end_s: must be > start_s (4), got 2`},
		{"background end after the run", "rate_per_s = 100", bg + "rate_per_s = 5\nend_s = 11", `x.toml:36: background.0.end_s: must be <= duration_s (10), got 11`},
		{"background unknown key", "rate_per_s = 100", bg + "rate = 5", `x.toml:35: background.0.rate: unknown field`},
		{"background retries negative", "rate_per_s = 100", bg + "rate_per_s = 5\nretries = -1", `x.toml:36: background.0.retries: must be between 0 and 10, got -1`},
		{"background retries too many", "rate_per_s = 100", bg + "rate_per_s = 5\nretries = 11", `x.toml:36: background.0.retries: must be between 0 and 10, got 11`},
		{"background retries not an integer", "rate_per_s = 100", bg + "rate_per_s = 5\nretries = 1.5", `x.toml:36: background.0.retries: must be an integer, written without a decimal point or exponent (2, not 2.0)`},
		{"background backoff zero", "rate_per_s = 100", bg + "rate_per_s = 5\nretries = 2\nretry_backoff_ms = 0", `x.toml:37: background.0.retry_backoff_ms: must be > 0, got 0`},
		{"background rate huge", "rate_per_s = 100", bg + "rate_per_s = 1e12", `x.toml:35: background.0.rate_per_s: background sources would simulate 2e+13 requests (rate_per_s × arrival window × targeted replicas × 1 replications × 2 policies); the limit is 2e+09: lower rate_per_s, the window, duration_s or replications`},
		{"background rate huge by region", "rate_per_s = 100", "rate_per_s = 100\n[[background]]\ntarget = \"West US\"\nrate_per_s = 3e8\nend_s = 5", `x.toml:35: background.0.rate_per_s: background sources would simulate 3e+09 requests (rate_per_s × arrival window × targeted replicas × 1 replications × 2 policies); the limit is 2e+09: lower rate_per_s, the window, duration_s or replications`},
		{"background backoff without retries", "rate_per_s = 100", bg + "rate_per_s = 5\nretry_backoff_ms = 50", `x.toml:36: background.0.retry_backoff_ms: applies only with retries > 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := string(base)
			if strings.Count(s, c.edit) != 1 {
				t.Fatalf("edit %q matches %d times", c.edit, strings.Count(s, c.edit))
			}
			_, err := Parse("x.toml", []byte(strings.Replace(s, c.edit, c.with, 1)))
			if err == nil || err.Error() != c.want {
				t.Errorf("error\n got: %v\nwant: %s", err, c.want)
			}
		})
	}
}

// The capacity keys reach simnet.
func TestCapacityKeys(t *testing.T) {
	base, err := os.ReadFile("testdata/valid.toml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(base), "servers = 4", "servers = 4\nqueue_limit = 20\noverflow_status = \"429/3200\"\ncancel = \"in_service\"", 1)
	src = strings.Replace(src, "rate_per_s = 100", "rate_per_s = 100\n[[background]]\ntarget = \"West US\"\nrate_per_s = 50\nstart_s = 2\nend_s = 8\n[[background]]\ntarget = \"eastus\"\nrate_per_s = 5\nservice = { family = \"constant\", value_ms = 1.0 }\nretries = 3\nretry_backoff_ms = 250", 1)
	s, err := Parse("x.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Replicas[1]
	if w.QueueLimit != 20 || w.OverflowStatus != (hedging.Status{Code: 429, SubStatus: 3200}) || w.Cancel != simnet.CancelInService {
		t.Errorf("westus: queue limit %d, overflow %v, cancel %v", w.QueueLimit, w.OverflowStatus, w.Cancel)
	}
	if e := cfg.Replicas[0]; e.QueueLimit != 0 || e.OverflowStatus != (hedging.Status{}) || e.Cancel != simnet.CancelQueued {
		t.Errorf("eastus defaults: %+v", e)
	}
	if len(cfg.Background) != 2 {
		t.Fatalf("background %+v", cfg.Background)
	}
	b0, b1 := cfg.Background[0], cfg.Background[1]
	if b0.Target != "West US" || b0.RatePerSec != 50 || b0.Start.Seconds() != 2 || b0.End.Seconds() != 8 || b0.Service != nil {
		t.Errorf("background 0: %+v", b0)
	}
	if b0.Retries != 0 || b0.RetryBackoff != 0 || b1.Retries != 3 || b1.RetryBackoff != 250*time.Millisecond {
		t.Errorf("background retries: %d / %v, %d / %v; want 0 / 0, 3 / 250ms", b0.Retries, b0.RetryBackoff, b1.Retries, b1.RetryBackoff)
	}
	if b1.Target != "eastus" || b1.End != 0 || b1.Service == nil || b1.Service.Mean() != 1 {
		t.Errorf("background 1: %+v", b1)
	}
}

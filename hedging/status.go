package hedging

import "fmt"

// Status is the outcome of one transport attempt: the HTTP status code and
// the service's sub-status code (the x-ms-substatus header; 0 when absent).
// Spec §7.
type Status struct {
	Code, SubStatus int
}

// Well-known sub-status codes used by the hedging rules (spec §7.2, §7.2.1,
// §9.6).
const (
	SubStatusNone                      = 0
	SubStatusWriteForbidden            = 3    // 403/3: triggers an account refresh (§6.5 #10)
	SubStatusDatabaseAccountNotFound   = 1008 // 403/1008: the region does not serve the account (a metadata read's regional failure)
	SubStatusLeaseNotFound             = 1022 // 410/1022: the partition's lease moved (a metadata read's regional failure)
	SubStatusReadSessionNotAvailable   = 1002 // 404/1002: session lag, session retry (§9.6)
	SubStatusSystemResourceUnavailable = 3092 // 429/3092: transient backend capacity pressure
	SubStatusRUBudgetExceeded          = 3200 // 429/3200: provisioned throughput exhausted (final)
	SubStatusRUBudgetExceededMaster    = 3210 // 429/3210: master-partition RU exhausted (final)
	SubStatusHotPartitionKeyThrottled  = 3214 // 429/3214: hot logical partition (final)
)

// String renders a status as "503" or "404/1002".
func (s Status) String() string {
	if s.SubStatus == 0 {
		return fmt.Sprintf("%d", s.Code)
	}
	return fmt.Sprintf("%d/%d", s.Code, s.SubStatus)
}

// IsFinal reports whether a response with status s is final (non-transient):
// a final result ends the hedge race at once, a transient one lets the other
// leg keep racing. Spec §7.1 and every row of the §7.2 table:
//
//   - 1xx, 2xx, 3xx: final.
//   - 400, 401, 403 (any sub-status), 405, 409, 412, 413, 422, 451, 501,
//     505: final.
//   - 404 with sub-status 0: final; 404 with any other sub-status (notably
//     1002, ReadSessionNotAvailable): transient.
//   - 429: transient, except sub-status 3200, 3210 and 3214 (account- or
//     partition-wide throttles that no region can relieve), which are final.
//   - 408, 410, 500, 503 and every other 4xx/5xx: transient.
//
// IsFinal is total: it never panics and gives an answer for every pair of
// integers, including codes outside 100–599 (codes below 400 are final,
// all others not listed above are transient).
func IsFinal(s Status) bool {
	if s.Code < 400 {
		return true
	}
	switch s.Code {
	case 400, 401, 403, 405, 409, 412, 413, 422, 451, 501, 505:
		return true
	case 404:
		return s.SubStatus == SubStatusNone
	case 429:
		switch s.SubStatus {
		case SubStatusRUBudgetExceeded, SubStatusRUBudgetExceededMaster, SubStatusHotPartitionKeyThrottled:
			return true
		}
	}
	return false
}

// finalError reports whether a final response with status s fails the
// operation for its caller: a status of 400 or more (§7.1's final 4xx and
// 5xx: 404 with sub-status 0, 409, 412, 429/3200, ...; the rest of the
// range is transient and never final). It is the classification a
// policy's [LegEnd.FinalError] carries.
func finalError(s Status) bool { return s.Code >= 400 }

// isFinalFor is [IsFinal] for an attempt of an operation of kind: the same
// table, except that a metadata read's 403/1008 (DatabaseAccountNotFound)
// is a regional failure (the region, not the request, is at fault), hence
// transient, as .NET's MetadataHedgingStrategy classifies it (spec §16
// Phase 2).
func isFinalFor(kind OperationKind, s Status) bool {
	if kind.IsMetadata() && s.Code == 403 && s.SubStatus == SubStatusDatabaseAccountNotFound {
		return false
	}
	return IsFinal(s)
}

// finalFor reports whether res, an attempt's result for an operation of
// kind, ends a race: no transport error and isFinalFor.
func finalFor(kind OperationKind, res *Result) bool {
	return res.Err == nil && isFinalFor(kind, res.Status)
}

// canSpawnHedge reports whether a first attempt of an operation of kind
// that returned status s may be upgraded into a cross-region hedge (spec
// §7.2.1, §6.5 #9 upgrade path): the statuses the retry layer answers with
// a region-changing retry (FailoverRetry or SessionRetry). A transport
// error (no response) qualifies too; the race checks it apart. It is the
// one classification of "the region is at fault" that the upgrade path and
// the retry layer (Race.retry) share.
//
//   - 503 (service unavailable): failover retry to another region. Yes.
//   - 404/1002 (read session not available): session retry. Yes.
//   - 429/3092 (system resource unavailable): admitted to the retry-trigger
//     group. Yes. Every other 429 (generic, 3200, 3210, 3214) aborts or backs
//     off in-region and never spawns a hedge.
//   - 408 (request timeout): No. The retry layer retries a timeout in the
//     same region; slowness is what the threshold timer already covers, and
//     upgrading timeouts would double-fire with the timer path.
//   - 410 (gone): No. A 410 is answered by a local address refresh and a
//     retry in the same region (the partition moved between replicas, not
//     between regions).
//   - 500 (internal server error): No. The retry layer does not retry a 500
//     across regions; it stays transient in-race (§7.2) but is not a
//     region-changing trigger.
//   - Final results: never.
//
// A metadata read (kind.IsMetadata) adds the regional failures of .NET's
// MetadataHedgingStrategy and MetadataRequestThrottleRetryPolicy (spec §16
// Phase 2): 500, 410/1022 (LeaseNotFound) and 403/1008
// (DatabaseAccountNotFound) also hedge at once and fail over.
func canSpawnHedge(kind OperationKind, s Status) bool {
	if !isFinalFor(kind, s) {
		switch s.Code {
		case 503:
			return true
		case 404:
			return s.SubStatus == SubStatusReadSessionNotAvailable
		case 429:
			return s.SubStatus == SubStatusSystemResourceUnavailable
		}
	}
	if kind.IsMetadata() {
		switch {
		case s.Code == 500,
			s.Code == 410 && s.SubStatus == SubStatusLeaseNotFound,
			s.Code == 403 && s.SubStatus == SubStatusDatabaseAccountNotFound:
			return true
		}
	}
	return false
}

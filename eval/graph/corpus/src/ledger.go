package records

import "time"

// Entry is one immutable line of the ledger.
type Entry struct {
	Actor  string
	At     time.Time
	Change string
}

// Ledger only ever grows.
type Ledger struct {
	entries []Entry
	sink    Sink
}

// Append adds an entry and flushes it to the sink.
func (l *Ledger) Append(actor, change string) error {
	e := Entry{Actor: actor, At: time.Now(), Change: change}
	l.entries = append(l.entries, e)
	return persistEntry(l.sink, e)
}

func persistEntry(s Sink, e Entry) error {
	return s.Write(e)
}

package sessionstore

import "time"

// Hooks for the freshness tests (fresh_test.go, package sessionstore_test).

// WithWatchLimit caps the directories o's index watches, as an exhausted
// inotify watch limit would.
func WithWatchLimit(o IndexOptions, n int) IndexOptions {
	o.watchLimit = n
	return o
}

// WithSpillJobs makes o's index spill the parse states of every pass of
// at least n parses.
func WithSpillJobs(o IndexOptions, n int) IndexOptions {
	o.spillJobs = n
	return o
}

// SetPollChunk sets how many cold sessions a poll stats and returns the
// function restoring it.
func SetPollChunk(n int) func() {
	old := pollChunk
	pollChunk = n
	return func() { pollChunk = old }
}

// SetPollHotMax sets how many hot unwatched sessions a poll stats out of
// turn and returns the function restoring it.
func SetPollHotMax(n int) func() {
	old := pollHotMax
	pollHotMax = n
	return func() { pollHotMax = old }
}

// NoteEverything records a notification that anything may have changed,
// as the watcher does after a lost event.
func (x *Indexed) NoteEverything() { x.noteChange(changeSet{all: true}) }

// StopPolling makes a NoWatch index behave as if everything were watched
// (no polls), so only notifications refresh it.
func (x *Indexed) StopPolling() {
	x.fresh.mu.Lock()
	x.fresh.pollAll = false
	x.fresh.mu.Unlock()
}

// ExpirePoll makes the next answer poll (its last poll is old).
func (x *Indexed) ExpirePoll() {
	x.fresh.mu.Lock()
	x.fresh.lastPoll = time.Time{}
	x.fresh.mu.Unlock()
}

// WatchState reports whether the index has a watcher, how many directories
// it watches and how many session directories and projects polls cover.
func (x *Indexed) WatchState() (watching bool, watched, unwatched int) {
	x.fresh.mu.Lock()
	unwatched = len(x.fresh.unwatched) + len(x.fresh.unwatchedProjects)
	x.fresh.mu.Unlock()
	if x.watcher == nil {
		return false, 0, unwatched
	}
	x.watcher.mu.Lock()
	defer x.watcher.mu.Unlock()
	return true, len(x.watcher.watched), unwatched
}

// UnwatchedSessions returns the "proj/seg" keys of the session directories
// polls cover (their watch could not be added).
func (x *Indexed) UnwatchedSessions() []string {
	x.fresh.mu.Lock()
	defer x.fresh.mu.Unlock()
	keys := make([]string, 0, len(x.fresh.unwatched))
	for k := range x.fresh.unwatched {
		keys = append(keys, k)
	}
	return keys
}

// HotPolled returns how many unwatched session directories the next poll
// checks out of turn, and whether it keeps a map for them.
func (x *Indexed) HotPolled() (n int, kept bool) {
	x.fresh.mu.Lock()
	defer x.fresh.mu.Unlock()
	return len(x.fresh.pollHot), x.fresh.pollHot != nil
}

// ScanCounts reports how many stat scans of the whole store the index ran,
// how many session directories' transcripts its scans stat'd, and how many
// cold unwatched sessions its polls checked before scanning.
func (x *Indexed) ScanCounts() (wholeScans, dirStats, coldChecks int64) {
	return x.wholeScans.Load(), x.dirStats.Load(), x.coldChecks.Load()
}

// StatBatches reports how many batches the index's scans stat'd.
func (x *Indexed) StatBatches() int64 { return x.statBatches.Load() }

// Listings reports how many times the index sorted its listing anew.
func (x *Indexed) Listings() int64 { return x.listings.Load() }

// AgePoll makes the last poll age old.
func (x *Indexed) AgePoll(age time.Duration) {
	x.fresh.mu.Lock()
	x.fresh.lastPoll = time.Now().Add(-age)
	x.fresh.mu.Unlock()
}

// HoldRefreshes keeps every refresh (poll, notified change, scan) from
// running until the returned function is called, as a refresh in progress
// would.
func (x *Indexed) HoldRefreshes() (release func()) {
	x.refreshMu.Lock()
	return x.refreshMu.Unlock
}

// PollEvery is how often the background poller polls.
const PollEvery = pollEvery

// Notices counts the change notices the index has had (a watcher's
// notifications and the watches it moved).
func (x *Indexed) Notices() uint64 {
	x.fresh.mu.Lock()
	defer x.fresh.mu.Unlock()
	return x.fresh.seq
}

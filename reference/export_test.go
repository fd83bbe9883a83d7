package reference

// The prompt's fixed frame, for the external tests that check a prompt's
// framing.
const (
	PromptHeader = promptHeader
	PromptFooter = promptFooter
)

// catalogCandidates is catalogPicks as the candidates ListCandidates
// answers with.
func catalogCandidates(c *Catalog, target Target, needle string, limit int64) ([]Candidate, error) {
	picked, err := catalogPicks(c, target, needle, limit)
	if err != nil {
		return nil, err
	}
	return c.candidates(picked), nil
}

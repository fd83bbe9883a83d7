package reference

// The prompt's fixed frame, for the external tests that check a prompt's
// framing.
const (
	PromptHeader = promptHeader
	PromptFooter = promptFooter
)

package transcript

// MessageID is messageID, for the external tests.
var MessageID = messageID

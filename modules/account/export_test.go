package account

// For the external tests, which run the real app (an internal test cannot import apptest).
var (
	ImportedHashes = importedHashes
	FirebaseVector = firebaseVector
)

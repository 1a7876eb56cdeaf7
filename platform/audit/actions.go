package audit

// The sign-up and sign-in actions (SPEC §28), named once for every module that signs
// people in, so each method is audited alike in the trail of the tenant it happens in
// ("public" for dashboard users, the project's id for its end users).
const (
	// ActionSignUp: an account was made. Metadata { userId, method } (method: password,
	// provider, email_link, email_code; via for a provider); an operator's account
	// (authcore users create) has actor system and via "operator".
	ActionSignUp = "user.signup"
	// ActionSignIn: a first factor proved the person. Metadata { userId, method } (password,
	// passkey, provider, email_link, email_code; via as before). When a second factor is
	// asked, ActionSignInSecondFactor follows.
	ActionSignIn = "user.signin"
	// ActionSignInSecondFactor: a second factor completed a sign-in. Metadata { userId,
	// method } (totp, recovery_code, passkey).
	ActionSignInSecondFactor = "user.signin_second_factor"
	// ActionSignInFailed: a wrong password or second factor for an account that exists.
	// Metadata { userId, method, reason } (reason: invalid_credentials,
	// invalid_second_factor).
	ActionSignInFailed = "user.signin_failed"
	// ActionPasswordChange: a signed-in person changed their password. Metadata { userId }.
	ActionPasswordChange = "user.password_change"
)

// Sign-in methods, as the metadata's method names them.
const (
	MethodPassword     = "password"
	MethodPasskey      = "passkey"
	MethodProvider     = "provider"
	MethodTOTP         = "totp"
	MethodRecoveryCode = "recovery_code"
)

package schema

// The id prefixes other packages test or mint ids with. ent/schema owns every id prefix:
// a package outside it names the constant, never the literal, so a prefix is spelled once
// (held by cmd/authcore/app TestIDPrefixesSpelledOnce).
const (
	WebhookIDPrefix             = "whk_"
	SigninProviderIDPrefix      = "idp_"
	EmailSigninIDPrefix         = "esi_"
	FederationFlowIDPrefix      = "ffl_"
	IdentityIDPrefix            = "idn_"
	OAuthClientIDPrefix         = "dcr_"
	AssertionIDPrefix           = "jti_"
	VaultConnectionIDPrefix     = "vc_"
	AgentTokenIDPrefix          = "tok_"
	UserIDPrefix                = "usr_"
	MFAFactorIDPrefix           = "mfa_"
	MFAChallengeIDPrefix        = "mch_"
	SigningKeyIDPrefix          = "key_"
	TrustedIssuerIDPrefix       = "tis_"
	BackchannelClientIDPrefix   = "bcc_"
	BackchannelRequestIDPrefix  = "bcr_"
	AuthClientIDPrefix          = "cli_"
	AuditStreamIDPrefix         = "ast_"
	AuditEventIDPrefix          = "aud_"
	AppSessionIDPrefix          = "aps_"
	LogoutDeliveryIDPrefix      = "lgd_"
	RegistrationTokenIDPrefix   = "iat_"
	DeviceAuthorizationIDPrefix = "dev_"
	OrgIDPrefix                 = "org_"
	OrgMemberIDPrefix           = "orm_"
	OrgRoleIDPrefix             = "orr_"
	OrgSetupLinkIDPrefix        = "osl_"
	SAMLConnectionIDPrefix      = "sml_"
	SCIMDirectoryIDPrefix       = "dir_"
	SCIMResourceIDPrefix        = "scr_"
)

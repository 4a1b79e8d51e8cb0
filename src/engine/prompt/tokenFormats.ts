// Token formats known by their prefix or their URL, as data (the rules `token prefix` and
// `token URL` of secretRuleSet.ts are built from them): the ones secretlint's recommended preset
// lacks, or knows only in a stricter shape (checksummed, fixed length). Each pattern matches the
// credential itself, which is replaced whole; `keep` is the part of the match that is not secret
// (a webhook's host and path).

interface TokenFormat {
  /** Whose token, in words. */
  name: string;
  /** A regular expression source; with `keep`, group 1 is kept and group 2 is the secret. */
  pattern: string;
  keep?: true;
}

export const TOKEN_FORMATS: readonly TokenFormat[] = [
  { name: 'AWS access key id', pattern: '(?:AKIA|ASIA)[0-9A-Z]{16}' },
  { name: 'GitHub token', pattern: 'gh[pousr]_[A-Za-z0-9]{30,255}' },
  { name: 'GitHub fine-grained token', pattern: 'github_pat_[A-Za-z0-9_]{22,255}' },
  { name: 'Slack token', pattern: 'xox[abposre]-[A-Za-z0-9-]{10,}' },
  { name: 'Slack app token', pattern: 'xapp-\\d-[A-Z0-9]+-\\d+-[a-f0-9]{32,}' },
  {
    name: 'Slack webhook',
    pattern: '(https?://hooks\\.slack\\.com/(?:services|workflows|triggers)/)([A-Za-z0-9_/-]{16,})',
    keep: true,
  },
  {
    name: 'Discord webhook',
    pattern: '(https?://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/)(\\d{15,22}/[A-Za-z0-9_-]{30,})',
    keep: true,
  },
  { name: 'Sentry token', pattern: 'sntry[su]_[A-Za-z0-9+/=_-]{32,}' },
  { name: 'Sentry DSN key', pattern: '(https?://)([0-9a-f]{32}(?::[0-9a-f]{32})?)(?=@[\\w.-]*(?:sentry\\.io|ingest)\\b)', keep: true },
  { name: 'OpenAI or Anthropic key', pattern: 'sk-(?:proj-|ant-|live_|test_|svcacct-)?[A-Za-z0-9_-]{20,}' },
  { name: 'Stripe key', pattern: '(?:sk|rk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}' },
  { name: 'Stripe webhook secret', pattern: 'whsec_[A-Za-z0-9]{24,}' },
  { name: 'GitLab token', pattern: 'gl(?:pat|dt|ptt|rt|cbt|oas|ft|imt|agent)-[A-Za-z0-9_-]{20,}' },
  { name: 'npm token', pattern: 'npm_[A-Za-z0-9]{36}' },
  { name: 'PyPI token', pattern: 'pypi-AgE[A-Za-z0-9_-]{40,}' },
  { name: 'Hugging Face token', pattern: 'hf_[A-Za-z]{30,40}' },
  { name: 'Databricks token', pattern: 'dapi[0-9a-f]{32}(?:-\\d)?' },
  { name: 'Google API key', pattern: 'AIza[0-9A-Za-z_-]{35}' },
  { name: 'SendGrid key', pattern: 'SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}' },
  { name: 'HashiCorp Vault token', pattern: 'hv[sbr]\\.[A-Za-z0-9_-]{24,}' },
  { name: 'Terraform Cloud token', pattern: '[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,}' },
  { name: 'Doppler token', pattern: 'dp\\.(?:st|ct|sa|scim|audit|pt)\\.[A-Za-z0-9_.-]{32,}' },
  { name: 'Postman key', pattern: 'PMAK-[0-9a-f]{24}-[0-9a-f]{34}' },
  { name: 'Twilio API key', pattern: 'SK[0-9a-f]{32}' },
  { name: 'Mailgun key', pattern: 'key-[0-9a-zA-Z]{32}' },
  { name: 'Mailgun key (2023 format)', pattern: '[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}' },
  { name: 'Mailchimp key', pattern: '[0-9a-f]{32}-us\\d{1,2}' },
  { name: 'Atlassian token', pattern: 'ATATT3[A-Za-z0-9_=-]{60,}' },
  { name: 'Telegram bot token', pattern: '\\d{8,10}:AA[A-Za-z0-9_-]{32,34}' },
  { name: 'age secret key', pattern: 'AGE-SECRET-KEY-1[0-9A-Z]{50,}' },
  { name: 'Shopify token', pattern: 'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}' },
  { name: 'Linear key', pattern: 'lin_(?:api|oauth)_[A-Za-z0-9]{32,}' },
  { name: 'DigitalOcean token', pattern: 'do[por]_v1_[a-f0-9]{64}' },
  { name: 'Grafana token', pattern: 'gl(?:sa|c)_[A-Za-z0-9+/_=]{32,}' },
  { name: 'Mapbox secret token', pattern: 'sk\\.eyJ[A-Za-z0-9_-]{20,}\\.[A-Za-z0-9_-]{20,}' },
  { name: 'New Relic key', pattern: 'NR(?:AK|II|JS)-[A-Za-z0-9]{20,}' },
  { name: 'PlanetScale token', pattern: 'pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}' },
  { name: 'Supabase token', pattern: 'sb(?:p|_secret)_[A-Za-z0-9_]{32,}' },
  { name: 'Pulumi token', pattern: 'pul-[a-f0-9]{40}' },
  { name: 'Notion token', pattern: '(?:secret_[A-Za-z0-9]{43}|ntn_\\d{11}[A-Za-z0-9]{35})' },
  { name: 'Figma token', pattern: 'figd_[A-Za-z0-9_-]{40}' },
  { name: 'Square token', pattern: '(?:sq0atp|sq0csp)-[0-9A-Za-z_-]{22,43}' },
  { name: 'Azure AD client secret', pattern: '[A-Za-z0-9_~.]{3}\\dQ~[A-Za-z0-9_~.-]{31,34}' },
  { name: 'Replicate token', pattern: 'r8_[A-Za-z0-9]{37}' },
  { name: 'Groq key', pattern: 'gsk_[A-Za-z0-9]{48,}' },
  { name: 'xAI key', pattern: 'xai-[A-Za-z0-9]{60,}' },
  { name: 'Fly.io token', pattern: 'fo1_[A-Za-z0-9_-]{40,}' },
  { name: 'JSON Web Token', pattern: 'eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}' },
];

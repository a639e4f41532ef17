//! The one login the server accepts, and SCRAM-SHA-256's password lookup behind it: the
//! password is read from a secret file only its owner may read, hashed once, and never kept in
//! plain; a user name other than the configured one gets a decoy, so that a wrong user fails
//! exactly as a wrong password does and user names cannot be probed.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion_postgres::pgwire;
use pgwire::api::auth::sasl::scram::{SCRAM_ITERATIONS, gen_salted_password, random_nonce};
use pgwire::api::auth::{AuthSource, LoginInfo, Password};
use pgwire::error::PgWireResult;

use super::ServeError;

/// The shortest password accepted from the secret file.
pub const MIN_PASSWORD_CHARS: usize = 12;

/// The one login the server accepts, kept as SCRAM's salted password: the plain password is
/// dropped once it is hashed.
#[derive(Debug)]
pub struct Credentials {
    user: String,
    salt: Vec<u8>,
    salted_password: Vec<u8>,
}

impl Credentials {
    /// Reads the password from `path`: its first line, of at least [`MIN_PASSWORD_CHARS`]
    /// characters, in a regular file that neither its group nor others may read (as ssh demands
    /// of a private key: a password every user of a login node can read protects nothing).
    pub fn load(user: &str, path: &Path) -> Result<Credentials, ServeError> {
        use std::os::unix::fs::MetadataExt;
        let fail = |reason: String| ServeError::Password {
            path: path.to_path_buf(),
            reason,
        };
        // The site chose this path in its configuration: a link there (into /etc/secrets, say)
        // is followed. A FIFO or a device is refused rather than read.
        let file =
            jobsight_base::safe_fs::open_regular(path, jobsight_base::safe_fs::Links::Follow)
                .map_err(|e| fail(e.to_string()))?;
        let mode = file.metadata().map_err(|e| fail(e.to_string()))?.mode();
        if mode & 0o077 != 0 {
            return Err(fail(format!(
                "group or others may access it (mode {:o}); chmod 600 it",
                mode & 0o777
            )));
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::Read::take(file, 4096), &mut text)
            .map_err(|e| fail(format!("not readable as text: {e}")))?;
        let password = text.lines().next().unwrap_or("").trim_end_matches('\r');
        if password.chars().count() < MIN_PASSWORD_CHARS {
            return Err(fail(format!(
                "the password (the file's first line) has fewer than {MIN_PASSWORD_CHARS} \
                 characters"
            )));
        }
        Ok(Credentials::new(user, password))
    }

    /// Hashes `password` for SCRAM with a fresh random salt.
    pub fn new(user: &str, password: &str) -> Credentials {
        let salt = random_nonce().into_bytes();
        let salted_password = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
        Credentials {
            user: user.to_string(),
            salt,
            salted_password,
        }
    }
}

/// SCRAM's password lookup: the configured user's salted password; for any other user a decoy,
/// so the exchange runs to its end and fails as a wrong password does. The decoy is the same on
/// every attempt for the same name, as the real user's salt is (a salt that changed each time
/// told an unknown name from the real one), of the same form, and as quick to make as the real
/// one is to look up (no key derivation a stopwatch could tell apart).
#[derive(Debug)]
pub(super) struct PasswordSource {
    credentials: Arc<Credentials>,
    /// This run's secret behind the decoys.
    decoy_key: [u8; 32],
}

impl PasswordSource {
    pub(super) fn new(credentials: Arc<Credentials>) -> PasswordSource {
        use sha2::Digest;
        // Two nonces of pgwire's random source: 36 random bytes.
        let seed = format!("{}{}", random_nonce(), random_nonce());
        PasswordSource {
            credentials,
            decoy_key: sha2::Sha256::digest(seed.as_bytes()).into(),
        }
    }

    /// The decoy salt and salted password of `user`: keyed hashes of the name, the salt in the
    /// form of a real one (18 bytes in base64, as `random_nonce` gives).
    fn decoy(&self, user: &str) -> (Vec<u8>, Vec<u8>) {
        use sha2::Digest;
        let keyed = |purpose: &str| -> [u8; 32] {
            let mut hash = sha2::Sha256::new();
            hash.update(self.decoy_key);
            hash.update(purpose.as_bytes());
            hash.update([0]);
            hash.update(user.as_bytes());
            hash.finalize().into()
        };
        let salt = base64(&keyed("salt")[..18]).into_bytes();
        (salt, keyed("salted password").to_vec())
    }
}

/// Standard base64 of `bytes`, whose length is a multiple of 3 (no padding needed).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    bytes
        .chunks(3)
        .flat_map(|c| {
            let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
            [18, 12, 6, 0].map(|shift| ALPHABET[(n >> shift) as usize & 63] as char)
        })
        .collect()
}

#[async_trait]
impl AuthSource for PasswordSource {
    async fn get_password(&self, login: &LoginInfo) -> PgWireResult<Password> {
        let credentials = &self.credentials;
        if login.user() == Some(credentials.user.as_str()) {
            Ok(Password::new(
                Some(credentials.salt.clone()),
                credentials.salted_password.clone(),
            ))
        } else {
            let (salt, salted_password) = self.decoy(login.user().unwrap_or(""));
            Ok(Password::new(Some(salt), salted_password))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unknown name's salt is the same on every attempt, as the real user's is, and looks
    /// like one: the review told names apart by a salt that changed each time.
    #[test]
    fn decoys_are_stable_per_name_and_look_real() {
        let source = PasswordSource::new(Arc::new(Credentials::new("jobsight", "a long password")));
        let (salt, salted) = source.decoy("mallory");
        assert_eq!(source.decoy("mallory"), (salt.clone(), salted.clone()));
        assert_ne!(source.decoy("eve").0, salt);
        let real = &source.credentials;
        assert_eq!(salt.len(), real.salt.len());
        assert_eq!(salted.len(), real.salted_password.len());
        assert!(
            salt.iter()
                .all(|b| b.is_ascii_alphanumeric() || b"+/".contains(b))
        );
        // Another run of the server has other decoys (the key is random).
        let other = PasswordSource::new(Arc::new(Credentials::new("jobsight", "a long password")));
        assert_ne!(other.decoy("mallory").0, salt);
        assert_eq!(base64(b"Man"), "TWFu");
    }

    #[test]
    fn a_password_file_others_can_read_or_too_short_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("pg-password");
        let set = |text: &str, mode: u32| {
            std::fs::write(&path, text).expect("write");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        };
        set("correct horse battery staple\n", 0o644);
        let e = Credentials::load("jobsight", &path).expect_err("world-readable");
        assert!(e.to_string().contains("chmod 600"), "{e}");
        set("short\n", 0o600);
        let e = Credentials::load("jobsight", &path).expect_err("too short");
        assert!(e.to_string().contains("fewer than 12"), "{e}");
        set("correct horse battery staple\nignored\n", 0o600);
        let c = Credentials::load("jobsight", &path).expect("loads");
        assert_eq!(c.user, "jobsight");
        assert_eq!(
            c.salted_password,
            gen_salted_password("correct horse battery staple", &c.salt, SCRAM_ITERATIONS)
        );
        let e = Credentials::load("jobsight", &dir.path().join("missing")).expect_err("missing");
        assert!(e.to_string().contains("missing"), "{e}");
    }
}

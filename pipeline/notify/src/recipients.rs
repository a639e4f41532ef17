//! Who gets a message: the site's files beside the configuration (holidays, the recipients
//! file), read and checked, and each user's address from them or the address template.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::NaiveDate;
use lettre::message::Mailbox;

use crate::{NotifyError, Settings, plan};

/// The files a site keeps beside the configuration, read and checked.
#[derive(Debug, Clone, Default)]
pub struct SiteFiles {
    pub holidays: BTreeSet<NaiveDate>,
    /// user → address, from `recipients_file`.
    pub recipients: BTreeMap<String, Mailbox>,
}

/// Reads the holiday file (one `YYYY-MM-DD` per line, `#` comments) and the recipients file
/// (`user address` per line), every bad line an error with its number.
pub fn load_site_files(settings: &Settings) -> Result<SiteFiles, NotifyError> {
    let lines = |path: &Path| -> Result<Vec<(usize, String)>, NotifyError> {
        let text = std::fs::read_to_string(path).map_err(|e| NotifyError::io(path, e))?;
        Ok(text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim().to_string()))
            .filter(|(_, l)| !l.is_empty())
            .collect())
    };
    let mut files = SiteFiles::default();
    if let Some(path) = &settings.holidays_file {
        for (line, text) in lines(path)? {
            let day = NaiveDate::parse_from_str(&text, "%Y-%m-%d").map_err(|e| {
                NotifyError::SiteFile {
                    path: path.clone(),
                    line,
                    reason: format!("{text:?} is not a YYYY-MM-DD date: {e}"),
                }
            })?;
            files.holidays.insert(day);
        }
    }
    if let Some(path) = &settings.recipients_file {
        for (line, text) in lines(path)? {
            let bad = |reason: String| NotifyError::SiteFile {
                path: path.clone(),
                line,
                reason,
            };
            let mut parts = text.split_whitespace();
            let (Some(user), Some(address), None) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(bad(format!("{text:?} is not `user address`")));
            };
            let address: lettre::Address = address
                .parse()
                .map_err(|e| bad(format!("{address:?} is not an email address: {e}")))?;
            files
                .recipients
                .insert(user.to_string(), Mailbox::new(None, address));
        }
    }
    Ok(files)
}

/// What `jobsight check` checks of this stage itself: the site files, read as a run reads them.
/// The templates are the render crate's (`jobsight_render::email::check`), which checks them
/// and says what was found.
pub fn check(settings: &Settings) -> Result<SiteFiles, NotifyError> {
    load_site_files(settings)
}

/// The address of `user`: the recipients file, else the template. `None` when neither gives a
/// single valid address (the plan only lets plain login names through, so a user name cannot
/// add a recipient).
pub fn address_of(user: &str, settings: &Settings, files: &SiteFiles) -> Option<Mailbox> {
    if let Some(mailbox) = files.recipients.get(user) {
        return Some(mailbox.clone());
    }
    if !plan::is_safe_user(user) {
        return None;
    }
    settings
        .recipient
        .replace("{user}", user)
        .parse::<lettre::Address>()
        .ok()
        .map(|a| Mailbox::new(None, a))
}

/// Who gets a message to `user` (an admins' message without one): the user's address, or the
/// admins in test mode; `None` when the user has no address.
pub(crate) fn recipients(
    user: Option<&str>,
    settings: &Settings,
    files: &SiteFiles,
) -> Option<Vec<Mailbox>> {
    match (user, settings.test_mode) {
        (Some(_), true) | (None, _) => Some(settings.admins.clone()),
        (Some(user), false) => address_of(user, settings, files).map(|m| vec![m]),
    }
}

//! The look every chart shares: slide-sized canvas, the embedded font, a palette that stays
//! distinct for readers with colour-blindness, and the words for axes.

use std::sync::Once;

use plotters::style::{FontStyle, RGBColor, register_font};

/// 16:9, large enough for a slide without scaling text.
pub const SIZE: (u32, u32) = (1280, 720);
/// The one font family charts use, registered from the embedded DejaVu Sans, and the family an
/// SVG names: a viewer with DejaVu Sans lays the text out as it was measured here, and one
/// without it falls back to its own sans-serif rather than to a serif.
pub const FONT: &str = "DejaVu Sans, sans-serif";
pub const TITLE: u32 = 36;
pub const LABEL: u32 = 26;
pub const TICK: u32 = 22;
pub const NOTE: u32 = 20;

/// Eleven colours, each distinct for readers with any common colour-blindness: seven of
/// Okabe–Ito's (yellow left out: it vanishes on white; black: it hides the black intervals and
/// marks drawn on it) and four of Paul Tol's. The first three are far apart in lightness too
/// (blue, orange, indigo), so the commonest charts of two or three configurations survive
/// greyscale printing; beyond that, series carry a shape or a name as well.
pub const PALETTE: [RGBColor; 11] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(51, 34, 136),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(136, 34, 85),
    RGBColor(153, 153, 153),
    RGBColor(153, 153, 51),
    RGBColor(221, 204, 119),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Registers DejaVu Sans (shipped in the `dejavu` crate; licence in `src/chart/LICENSE-DejaVu`)
/// so no system font is looked up and text is measured the same on every machine.
pub fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (style, bytes) in [
            (FontStyle::Normal, dejavu::sans::regular()),
            (FontStyle::Bold, dejavu::sans::bold()),
        ] {
            let registered = register_font(FONT, style, bytes);
            assert!(registered.is_ok(), "DejaVu Sans is a valid font");
        }
    });
}

/// What a swept key means, in words, where retrysim knows it.
pub fn meaning(path: &str) -> Option<&'static str> {
    let leaf = path.rsplit('.').next().unwrap_or(path);
    Some(match leaf {
        "reply_loss" => "b = P(commit, then reply lost)",
        "request_loss" => "a = P(request lost before commit)",
        "server_error" => "P(5xx before commit)",
        "max_attempts" => "attempts allowed (counting the first)",
        "tasks" => "tasks",
        "rate_scale" => "load, × the rate schedule",
        "clients" => "clients",
        "timeout" => "attempt timeout",
        "workers" => "server workers",
        "at" if path.contains("rate.") => "when a point of the rate schedule starts",
        "times" if path.contains(".calls.") => "calls made together (fan-out)",
        _ => return None,
    })
}

/// A readable axis title for a swept key path: what the key means, then the path itself.
pub fn axis_title(path: &str) -> String {
    match meaning(path) {
        Some(meaning) => format!("{meaning}   [{path}]"),
        None => path.to_string(),
    }
}

//! The look every chart shares: slide-sized canvas, the embedded font, a palette that stays
//! distinct for readers with colour-blindness, and the words for axes.

use std::sync::Once;

use plotters::style::{FontStyle, RGBColor, register_font};

/// 16:9, large enough for a slide without scaling text.
pub const SIZE: (u32, u32) = (1280, 720);
/// The one font family charts use; registered from the embedded DejaVu Sans.
pub const FONT: &str = "sans-serif";
pub const TITLE: u32 = 36;
pub const LABEL: u32 = 26;
pub const TICK: u32 = 22;
pub const NOTE: u32 = 20;

/// Twelve colours, each distinct for readers with any common colour-blindness: the
/// Okabe–Ito eight (yellow left out: it vanishes on white) and five of Paul Tol's muted scheme.
/// Series are also told apart by marker shape, which survives greyscale printing.
pub const PALETTE: [RGBColor; 12] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(136, 34, 85),
    RGBColor(153, 153, 153),
    RGBColor(51, 34, 136),
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

/// A readable axis title for a swept key path: what the key means, then the path itself.
pub fn axis_title(path: &str) -> String {
    let leaf = path.rsplit('.').next().unwrap_or(path);
    let meaning = match leaf {
        "reply_loss" => "b = P(commit, then reply lost)",
        "request_loss" => "a = P(request lost before commit)",
        "server_error" => "P(5xx before commit)",
        "max_attempts" => "attempts allowed (counting the first)",
        "tasks" => "tasks",
        "rate_scale" => "load, × the rate schedule",
        "clients" => "clients",
        _ => return path.to_string(),
    };
    format!("{meaning}   [{path}]")
}

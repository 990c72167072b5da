package help;

import java.util.List;

public class RelevanceScorer {
    private final double helpfulBoost = 1.2;

    public double score(Article article, List<String> terms) {
        double s = TermMatcher.overlap(article.title(), terms) * 2.0
                 + TermMatcher.overlap(article.body(), terms);
        return article.votes() > 0 ? s * helpfulBoost : s;
    }
}
